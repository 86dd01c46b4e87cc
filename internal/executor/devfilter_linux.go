package executor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On cgroup v2 the kernel fences devices with an eBPF program of type
// BPF_PROG_TYPE_CGROUP_DEVICE attached to the cgroup, as runc and systemd
// do: it sees the device type, major, minor and access of each open or
// mknod and returns 1 to allow it, 0 to refuse it (EPERM). The program
// below is assembled by hand from the task's rules, in the shape runc's
// devicefilter gives it, and loaded with the bpf system call.

// bpfInsn is one eBPF instruction.
type bpfInsn struct {
	code     uint8
	dst, src uint8
	off      int16
	imm      int32
}

// Opcodes used by the device program.
const (
	bpfLdxMemW = 0x61 // dst = *(u32 *)(src + off)
	bpfMovReg  = 0xbf // dst = src
	bpfMovImm  = 0xb7 // dst = imm
	bpfAndImm  = 0x57 // dst &= imm
	bpfRshImm  = 0x77 // dst >>= imm
	bpfJneImm  = 0x55 // if dst != imm: pc += off
	bpfExit    = 0x95 // return r0
)

// deviceProgram allows what one of rules allows and refuses the rest.
// It reads struct bpf_cgroup_dev_ctx { u32 access_type; u32 major; u32
// minor; }, where access_type is the access << 16 | the device type.
func deviceProgram(rules []deviceRule) []bpfInsn {
	prog := []bpfInsn{
		{code: bpfLdxMemW, dst: 2, src: 1, off: 0},
		{code: bpfMovReg, dst: 3, src: 2},
		{code: bpfAndImm, dst: 3, imm: 0xffff}, // r3: device type
		{code: bpfMovReg, dst: 4, src: 2},
		{code: bpfRshImm, dst: 4, imm: 16},         // r4: access asked for
		{code: bpfLdxMemW, dst: 5, src: 1, off: 4}, // r5: major
		{code: bpfLdxMemW, dst: 6, src: 1, off: 8}, // r6: minor
	}
	for _, r := range rules {
		block := ruleBlock(r)
		prog = append(prog, block...)
		if block[0].code != bpfJneImm {
			return prog // allows everything: the verifier refuses code after it, unreachable
		}
	}
	return append(prog, bpfInsn{code: bpfMovImm, dst: 0, imm: 0}, bpfInsn{code: bpfExit})
}

// ruleBlock returns 1 when the device asked for matches r, and otherwise
// jumps past itself to the next rule.
func ruleBlock(r deviceRule) []bpfInsn {
	var block []bpfInsn
	switch r.typ {
	case 'c':
		block = append(block, bpfInsn{code: bpfJneImm, dst: 3, imm: unix.BPF_DEVCG_DEV_CHAR})
	case 'b':
		block = append(block, bpfInsn{code: bpfJneImm, dst: 3, imm: unix.BPF_DEVCG_DEV_BLOCK})
	}
	if deny := ^accessMask(r.access) & 7; deny != 0 {
		block = append(block, bpfInsn{code: bpfMovReg, dst: 7, src: 4},
			bpfInsn{code: bpfAndImm, dst: 7, imm: deny}, bpfInsn{code: bpfJneImm, dst: 7, imm: 0})
	}
	if r.major >= 0 {
		block = append(block, bpfInsn{code: bpfJneImm, dst: 5, imm: int32(r.major)})
	}
	if r.minor >= 0 {
		block = append(block, bpfInsn{code: bpfJneImm, dst: 6, imm: int32(r.minor)})
	}
	block = append(block, bpfInsn{code: bpfMovImm, dst: 0, imm: 1}, bpfInsn{code: bpfExit})
	for i := range block {
		if block[i].code == bpfJneImm {
			block[i].off = int16(len(block) - i - 1)
		}
	}
	return block
}

func accessMask(access string) int32 {
	var m int32
	for _, c := range access {
		switch c {
		case 'm':
			m |= unix.BPF_DEVCG_ACC_MKNOD
		case 'r':
			m |= unix.BPF_DEVCG_ACC_READ
		case 'w':
			m |= unix.BPF_DEVCG_ACC_WRITE
		}
	}
	return m
}

// encode is the program as the kernel reads it, in the host's order.
func encode(prog []bpfInsn) []byte {
	little := binary.NativeEndian.Uint16([]byte{1, 0}) == 1
	out := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		regs := in.dst&0xf | in.src<<4
		if !little {
			regs = in.dst<<4 | in.src&0xf
		}
		out = append(out, in.code, regs)
		out = binary.NativeEndian.AppendUint16(out, uint16(in.off))
		out = binary.NativeEndian.AppendUint32(out, uint32(in.imm))
	}
	return out
}

// bpfProgLoadAttr is the head of union bpf_attr for BPF_PROG_LOAD.
type bpfProgLoadAttr struct {
	progType    uint32
	insnCnt     uint32
	insns       uint64
	license     uint64
	logLevel    uint32
	logSize     uint32
	logBuf      uint64
	kernVersion uint32
	progFlags   uint32
}

// bpfAttachAttr is the head of union bpf_attr for BPF_PROG_ATTACH.
type bpfAttachAttr struct {
	targetFD    uint32
	attachBPFFD uint32
	attachType  uint32
	attachFlags uint32
}

// loadDeviceProgram loads prog into the kernel and returns its file
// descriptor. On failure it loads it again with the verifier's log, to
// say why.
func loadDeviceProgram(prog []bpfInsn) (int, error) {
	code, license := encode(prog), []byte("Apache-2.0\x00")
	attr := bpfProgLoadAttr{progType: unix.BPF_PROG_TYPE_CGROUP_DEVICE, insnCnt: uint32(len(prog)),
		insns: uint64(uintptr(unsafe.Pointer(&code[0]))), license: uint64(uintptr(unsafe.Pointer(&license[0])))}
	fd, err := bpf(unix.BPF_PROG_LOAD, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	if err == nil {
		runtime.KeepAlive(code)
		runtime.KeepAlive(license)
		return fd, nil
	}
	log := make([]byte, 1<<16)
	attr.logLevel, attr.logSize, attr.logBuf = 1, uint32(len(log)), uint64(uintptr(unsafe.Pointer(&log[0])))
	if fd, err2 := bpf(unix.BPF_PROG_LOAD, unsafe.Pointer(&attr), unsafe.Sizeof(attr)); err2 == nil {
		unix.Close(fd)
	}
	runtime.KeepAlive(code)
	runtime.KeepAlive(license)
	if msg := strings.TrimSpace(unix.ByteSliceToString(log)); msg != "" {
		err = fmt.Errorf("%w: %s", err, msg)
	}
	return -1, fmt.Errorf("loading an eBPF device program: %w", err)
}

func bpf(cmd int, attr unsafe.Pointer, size uintptr) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_BPF, uintptr(cmd), uintptr(attr), size)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// attachDeviceFilter attaches a device program of rules to the v2 cgroup
// dir. The attachment keeps the program alive until the cgroup goes. It
// composes with programs on the cgroup's parents (BPF_F_ALLOW_MULTI, as
// systemd attaches them): a device must pass them all.
func attachDeviceFilter(dir string, rules []deviceRule) error {
	prog, err := loadDeviceProgram(deviceProgram(rules))
	if err != nil {
		return err
	}
	defer unix.Close(prog)
	cg, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening cgroup %s: %w", dir, err)
	}
	defer unix.Close(cg)
	attr := bpfAttachAttr{targetFD: uint32(cg), attachBPFFD: uint32(prog), attachType: unix.BPF_CGROUP_DEVICE, attachFlags: unix.BPF_F_ALLOW_MULTI}
	if _, err := bpf(unix.BPF_PROG_ATTACH, unsafe.Pointer(&attr), unsafe.Sizeof(attr)); err != nil {
		return fmt.Errorf("attaching the eBPF device program to %s: %w", dir, err)
	}
	return nil
}

// probeDeviceFilter tells whether the kernel takes a device program from
// this process, on a cgroup made for the purpose under dir. dir itself is
// made for the probe, and removed after it, when it is not there: a
// Cgroups' directories exist only while a task runs (OpenCgroups).
func probeDeviceFilter(dir string) error {
	switch err := os.Mkdir(dir, 0o755); {
	case err == nil:
		defer os.Remove(dir)
	case !errors.Is(err, os.ErrExist):
		return err
	}
	probe := filepath.Join(dir, "probe-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	defer os.Remove(probe)
	return attachDeviceFilter(probe, []deviceRule{{'a', -1, -1, "rwm"}})
}
