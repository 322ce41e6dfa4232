"""Process-level helpers: returning freed heap to the system, a child process that leaves
signals to its parent. The only part of the libraries that talks to the C library."""
