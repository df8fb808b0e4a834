/* fresh_stack_call, see fresh_stack.h: calls fn(arg) with the stack pointer at
 * top, and comes back to the caller's stack. */
#if defined(__x86_64__)
	.text
	.globl	fresh_stack_call
	.hidden	fresh_stack_call
	.type	fresh_stack_call, @function
	.p2align 4
/* void fresh_stack_call(void *top, void (*fn)(void *), void *arg) */
fresh_stack_call:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	andq	$-16, %rdi		/* the ABI's alignment at a call */
	movq	%rdi, %rsp
	movq	%rdx, %rdi
	call	*%rsi
	movq	%rbp, %rsp
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	fresh_stack_call, .-fresh_stack_call
#endif
	.section .note.GNU-stack,"",@progbits
