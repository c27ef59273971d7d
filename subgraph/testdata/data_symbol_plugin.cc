// Exports a data object named mx_plugin_init: calling it would execute
// data. The host must refuse it.
extern "C"
    __attribute__((visibility("default"))) unsigned char mx_plugin_init[16] = {
        0xff, 0xff, 0xff, 0xff};
