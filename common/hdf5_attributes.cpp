// The scalar attributes of HDF5 files (common/hdf5_file.h): variable-length UTF-8 strings as h5py
// writes them, 64-bit integers and doubles; fixed-length strings of other writers are read too.
#include <fmt/format.h>

#include "common/hdf5_file.h"

namespace nmt {

void Hdf5Writer::write_attribute(const std::string& object, const std::string& name, hid_t type,
                                 const void* value) {
  Hdf5Handle target = open_object(object);
  if (H5Aexists(target.get(), name.c_str()) > 0) H5Adelete(target.get(), name.c_str());
  Hdf5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Hdf5Handle attr(
      H5Acreate2(target.get(), name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  if (attr.get() < 0 || H5Awrite(attr.get(), type, value) < 0) {
    fail(fmt::format("cannot write attribute '{}' on '{}'", name, object));
  }
}

void Hdf5Writer::set_attribute(const std::string& object, const std::string& name,
                               const std::string& value) {
  // Variable-length UTF-8 strings: h5py reads these back as str.
  Hdf5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  const char* text = value.c_str();
  write_attribute(object, name, type.get(), &text);
}

void Hdf5Writer::set_attribute(const std::string& object, const std::string& name,
                               std::int64_t value) {
  write_attribute(object, name, H5T_NATIVE_INT64, &value);
}

void Hdf5Writer::set_attribute(const std::string& object, const std::string& name, double value) {
  write_attribute(object, name, H5T_NATIVE_DOUBLE, &value);
}

bool Hdf5File::has_attribute(const std::string& object, const std::string& name) const {
  return H5Aexists(open_object(object).get(), name.c_str()) > 0;
}

Hdf5Handle Hdf5File::open_attribute(const std::string& object, const std::string& name) const {
  Hdf5Handle target = open_object(object);
  if (H5Aexists(target.get(), name.c_str()) <= 0) {
    fail(fmt::format("'{}' has no attribute '{}'", object, name));
  }
  return Hdf5Handle(H5Aopen(target.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
}

std::string Hdf5File::string_attribute(const std::string& object, const std::string& name) const {
  Hdf5Handle attr = open_attribute(object, name);
  Hdf5Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING) {
    fail(fmt::format("attribute '{}' on '{}' is not a string", name, object));
  }
  if (H5Tis_variable_str(type.get()) > 0) {
    Hdf5Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    char* text = nullptr;
    if (H5Aread(attr.get(), mem.get(), &text) < 0)
      fail(fmt::format("cannot read attribute '{}'", name));
    std::string value = text != nullptr ? text : "";
    Hdf5Handle space(H5Aget_space(attr.get()), H5Sclose);
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, &text);
    return value;
  }
  // Fixed-length strings, as other writers (h5py with numpy bytes) produce.
  std::string value(H5Tget_size(type.get()), '\0');
  if (H5Aread(attr.get(), type.get(), value.data()) < 0) {
    fail(fmt::format("cannot read attribute '{}'", name));
  }
  return value.substr(0, value.find('\0'));
}

H5T_class_t Hdf5File::attribute_class(const Hdf5Handle& attr) const {
  Hdf5Handle type(H5Aget_type(attr.get()), H5Tclose);
  return H5Tget_class(type.get());
}

std::int64_t Hdf5File::int_attribute(const std::string& object, const std::string& name) const {
  Hdf5Handle attr = open_attribute(object, name);
  std::int64_t value = 0;
  if (attribute_class(attr) != H5T_INTEGER || H5Aread(attr.get(), H5T_NATIVE_INT64, &value) < 0) {
    fail(fmt::format("attribute '{}' on '{}' is not an integer", name, object));
  }
  return value;
}

double Hdf5File::double_attribute(const std::string& object, const std::string& name) const {
  Hdf5Handle attr = open_attribute(object, name);
  double value = 0;
  const H5T_class_t kind = attribute_class(attr);
  if ((kind != H5T_FLOAT && kind != H5T_INTEGER) ||
      H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value) < 0) {
    fail(fmt::format("attribute '{}' on '{}' is not a number", name, object));
  }
  return value;
}

}  // namespace nmt
