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
	cmpb	$0, record_module_pending(%rip)
	jne	2f
0:	testl	$RTLD_DEEPBIND, %esi
	jz	1f
	cmpb	$0, deepbind_rebinding(%rip)
	jne	deepbind_dlopen		/* a jump too: its return address is the caller's */
1:	movq	deepbind_real_dlopen(%rip), %rax
	testq	%rax, %rax
	jz	deepbind_dlopen_unresolved
	jmp	*%rax
	/* Replay's record module first (record_module.h), the arguments kept,
	 * the stack aligned for the call. */
2:	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	call	record_module_open_late
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	jmp	0b
	.cfi_endproc
	.size	dlopen, .-dlopen
#endif
	.section .note.GNU-stack,"",@progbits
