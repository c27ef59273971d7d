// A shared library without mx_plugin_init.
extern "C" int not_a_plugin_function() { return 42; }
