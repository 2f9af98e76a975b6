/* The worker stack each vertex type declares to popc (foam/codelet.h FOAM_STACK):
 * what the host build measures for one worker of it (poplar-bridge/build/
 * codelet_costs.rs: its frame and its deepest chain of callees, x1 on the IPU, see
 * poplar_host/Report.hpp), rounded up to 64 bytes. The host runtime counts the
 * measured stacks, six workers' worth per tile, in every tile's memory;
 * poplar-bridge/tests/sdk_paths.rs fails when a declaration falls below what is
 * measured or stays more than 256 bytes above it. */
#ifndef FOAM_STACKS_H
#define FOAM_STACKS_H

#define FOAM_STACK_TracerMarch 1280
#define FOAM_STACK_TracerSend 832
#define FOAM_STACK_RouterCount 448
#define FOAM_STACK_RouterPlan 512
#define FOAM_STACK_RouterCountPlan 576
#define FOAM_STACK_RouterForward 704
#define FOAM_STACK_SpillStore 576
#define FOAM_STACK_Injector 704
#define FOAM_STACK_InjectorMarch 896
#define FOAM_STACK_InjectorSend 960
#define FOAM_STACK_InjectorDealEmit 1024
#define FOAM_STACK_ZeroBytes 128
#define FOAM_STACK_ZeroWords 128

#endif /* FOAM_STACKS_H */
