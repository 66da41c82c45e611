#include "unit.h"
int main(void){ if (CU_initialize_registry()!=CUE_SUCCESS) return 1; return unit_run(); }
