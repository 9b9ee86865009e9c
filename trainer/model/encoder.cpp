// Being implemented.
