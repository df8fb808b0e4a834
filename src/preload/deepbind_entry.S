/* memplan's dlopen, see deepbind.h. In assembly, so that the common case is a
 * jump for certain, at every optimisation level: glibc's dlopen then sees the
 * program's own return address. */
#if defined(__x86_64__)
#define RTLD_DEEPBIND 0x00008

	.text
	.globl	dlopen
	.type	dlopen, @function
	.p2align 4
dlopen:
	.cfi_startproc
	testl	$RTLD_DEEPBIND, %esi
	jz	1f
	cmpb	$0, deepbind_rebinding(%rip)
	jne	deepbind_dlopen		/* a jump too: its return address is the caller's */
1:	movq	deepbind_real_dlopen(%rip), %rax
	testq	%rax, %rax
	jz	deepbind_dlopen_unresolved
	jmp	*%rax
	.cfi_endproc
	.size	dlopen, .-dlopen
#endif
	.section .note.GNU-stack,"",@progbits
