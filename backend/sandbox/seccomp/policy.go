// Package seccomp is the system-call filter of a Linux box: the calls a
// coding agent never needs and that reach the kernel's riskier corners or
// the host (the keyring, BPF, perf events, modules, kexec, io_uring,
// userfaultfd, handles that bypass paths, reboot, swap and the clock, other
// processes' memory policies and files) are refused, everything else is
// allowed. The reference is Docker's default profile (moby/profiles/seccomp):
// what it denies to a container without capabilities, less what the box
// keeps on purpose (see Kept). The filter is built in pure Go
// (golang.org/x/net/bpf) from syscall tables generated from
// github.com/elastic/go-seccomp-bpf's (zsysnum.go); no cgo, no libseccomp.
//go:generate go run gen_sysnum.go
//go:generate go run gen_sysnum.go

package seccomp

// Errno values (the same on every architecture the filter is built for).
const (
	errEPERM  = 1
	errENOSYS = 38
)

// Rule refuses Names with Errno — when FlagMask is set, only calls whose
// first argument (the flags of clone and unshare) has one of its bits.
type Rule struct {
	Names    []string
	Errno    uint32
	FlagMask uint32
	Why      string
}

// Namespace flags of clone (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER,
// NEWPID, NEWNET) and of unshare (with CLONE_NEWTIME, which clone's low
// byte, the exit signal, cannot hold).
const (
	cloneNewMask   = 0x7e020000
	unshareNewMask = cloneNewMask | 0x80
)

// Denied is the policy. A name an architecture lacks is skipped there.
var Denied = []Rule{
	{Names: []string{"add_key", "keyctl", "request_key"}, Errno: errEPERM,
		Why: "the kernel keyring: the user's keys and tokens"},
	{Names: []string{"bpf", "perf_event_open"}, Errno: errEPERM,
		Why: "BPF programs and performance events: kernel attack surface, and a view of other processes"},
	{Names: []string{"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
		"create_module", "query_module", "get_kernel_syms", "reboot", "swapon", "swapoff", "acct", "syslog",
		"lookup_dcookie", "nfsservctl", "uselib", "ustat", "sysfs", "_sysctl", "vhangup", "quotactl",
		"quotactl_fd", "iopl", "ioperm", "vm86", "vm86old", "pciconfig_iobase", "pciconfig_read", "pciconfig_write"}, Errno: errEPERM,
		Why: "the machine's kernel, devices, swap and accounting: never an agent's business"},
	{Names: []string{"settimeofday", "clock_settime", "clock_settime64", "stime"}, Errno: errEPERM,
		Why: "setting the clock"},
	{Names: []string{"userfaultfd", "open_by_handle_at", "fanotify_init"}, Errno: errEPERM,
		Why: "page-fault handling (a classic exploit aid), opening files by handle past every path check, watching the file system"},
	{Names: []string{"mbind", "set_mempolicy", "set_mempolicy_home_node", "migrate_pages", "move_pages"}, Errno: errEPERM,
		Why: "NUMA memory placement, of its own and other processes"},
	{Names: []string{"kcmp", "pidfd_getfd", "process_madvise"}, Errno: errEPERM,
		Why: "other processes' files and memory (Docker allows them only with CAP_SYS_PTRACE)"},
	{Names: []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}, Errno: errENOSYS,
		Why: "io_uring: a large kernel attack surface that bypasses the filter; programs fall back when it is missing"},
	{Names: []string{"clone"}, Errno: errEPERM, FlagMask: cloneNewMask,
		Why: "new namespaces: a user namespace gives its maker every capability over the kernel code it reaches (netfilter, mounts: the usual way to a privilege escalation); in a box they are of no use besides (Landlock keeps a nested one from setting its ID maps)"},
	{Names: []string{"unshare"}, Errno: errEPERM, FlagMask: unshareNewMask, Why: "new namespaces, as clone"},
	{Names: []string{"clone3"}, Errno: errENOSYS,
		Why: "its flags are out of the filter's reach; C libraries and Go fall back to clone, whose flags are checked"},
	{Names: []string{"setns", "mount", "umount", "umount2", "pivot_root", "chroot", "mount_setattr", "move_mount",
		"open_tree", "open_tree_attr", "fsopen", "fsconfig", "fsmount", "fspick", "sethostname", "setdomainname"}, Errno: errEPERM,
		Why: "namespaces and mounts: a box holds no capability for them, so they only reach kernel code"},
}

// Kept are calls Docker's profile denies to a container without
// capabilities that the box allows, and why.
var Kept = []Rule{
	{Names: []string{"get_mempolicy", "lsm_get_self_attr", "lsm_list_modules", "lsm_set_self_attr"},
		Why: "they only read, or only restrict the caller"},
	{Names: []string{"personality"},
		Why: "with any persona (Docker allows a few): debuggers turn address randomisation off for what they run"},
	{Names: []string{"afs_syscall", "getpmsg", "putpmsg", "security", "tuxcall", "vserver"},
		Why: "not implemented by Linux: they fail anyway"},
}
