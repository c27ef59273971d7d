/* Compiled with -std=c99 -pedantic -Werror: the ABI header is plain C. */
#include "backends/plugin_api/mx_plugin.h"

size_t mx_c99_check_sizes(void) {
  return sizeof(MxHostApi) + sizeof(MxOpDef) + sizeof(MxDeviceDef) +
         sizeof(MxSubgraphPropertyDef) + sizeof(MxKernelContext);
}
