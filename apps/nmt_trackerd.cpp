// Being implemented.
int main() { return 1; }
