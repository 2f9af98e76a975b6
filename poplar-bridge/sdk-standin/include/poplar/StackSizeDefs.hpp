// Stand-in for the Poplar SDK's codelet header (see ../../README.md). In the SDK the
// stack-size definitions exist for IPU targets only; DEF_STACK_USAGE(bytes, symbol)
// records the stack a function (a vertex's entry __runCodelet_<Vertex>) needs.
#ifndef FOAM_STANDIN_POPLAR_STACKSIZEDEFS_HPP
#define FOAM_STANDIN_POPLAR_STACKSIZEDEFS_HPP

#ifndef __IPU__
#error "poplar/StackSizeDefs.hpp: the stack-size definitions exist for IPU targets only"
#endif

#define DEF_STACK_USAGE(bytes, symbol) static_assert((bytes) > 0 && sizeof(#symbol) > 1, "stack usage of " #symbol)

#endif
