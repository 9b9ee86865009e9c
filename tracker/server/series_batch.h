#pragma once
// GET /api/series (tracker/API.md): many metric series in one answer, each read by
// RunStore::metric_series() as GET /api/runs/{run}/metrics reads it, within the limits of one
// request (tracker/api/limits.h): the run and key pairs are counted first, and the points each
// series may have are then lowered so that all of them fit the total.

#include <cstdint>

#include "tracker/api/series_query.h"
#include "tracker/api/wire_types.h"
#include "tracker/store/run_store.h"

namespace nmt::tracker {

// The series of `query` from `store`, each at most min(query.max_points, `max_response_points`,
// an equal share of kSeriesPointsFactor x `max_response_points`) points. FieldError `keys` past
// kMaxSeriesPerRequest series; NotFound for an unknown run.
api::SeriesList read_series(RunStore& store, const api::SeriesQuery& query,
                            std::int64_t max_response_points);

}  // namespace nmt::tracker
