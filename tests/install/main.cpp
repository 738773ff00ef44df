// A consumer of the installed package: only the public header, only the exported target.
#include <strata_moe.h>

#include <cstdio>
#include <cstring>

int main() {
  strata_moe_layer* layer = nullptr;
  const strata_moe_status status = strata_moe_layer_create(STRATA_MOE_BACKEND_CPU, nullptr, &layer);
  const char* message = strata_moe_last_error();
  std::printf("status %d: %s\n", static_cast<int>(status), message);
  // A null descriptor must be refused by name, not crash.
  return (status == STRATA_MOE_INVALID_ARGUMENT && std::strstr(message, "desc") != nullptr) ? 0 : 1;
}
