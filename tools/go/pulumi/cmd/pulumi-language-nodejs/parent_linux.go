package main

import "syscall"

// setParentDeathSignal asks the kernel to send sig to this process when its parent exits. A failure leaves the
// parent pid poll of exitWithParent, which notices within a second.
func setParentDeathSignal(sig syscall.Signal) {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(sig), 0)
}
