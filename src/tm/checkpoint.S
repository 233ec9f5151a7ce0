/* SPDX-License-Identifier: MIT */
/*
 * _ITM_beginTransaction and the matching restore, for x86-64 SysV.
 *
 * GCC treats _ITM_beginTransaction like setjmp (returns_twice): when a
 * transaction restarts or is cancelled, the runtime makes that call return
 * again. So it saves what the callee must preserve (rbx, rbp, r12-r15),
 * the caller's stack pointer after the return (cfa) and the return
 * address, then calls strobe__tm_begin(properties, &checkpoint), which
 * copies the checkpoint into the transaction descriptor (this frame dies
 * on return). The layout is struct tm_jmpbuf in tx.h.
 */
    .text
    .globl  _ITM_beginTransaction
    .type   _ITM_beginTransaction, @function
    .p2align 4
_ITM_beginTransaction:
    .cfi_startproc
    leaq    8(%rsp), %rax           /* cfa: rsp after our return */
    subq    $72, %rsp               /* 64-byte jmpbuf, keeps rsp 16-aligned */
    .cfi_adjust_cfa_offset 72
    movq    %rax, (%rsp)
    movq    %rbx, 8(%rsp)
    movq    %rbp, 16(%rsp)
    movq    %r12, 24(%rsp)
    movq    %r13, 32(%rsp)
    movq    %r14, 40(%rsp)
    movq    %r15, 48(%rsp)
    movq    72(%rsp), %rax          /* return address */
    movq    %rax, 56(%rsp)
    movq    %rsp, %rsi
    call    strobe__tm_begin        /* hidden: a direct call, no PLT */
    addq    $72, %rsp
    .cfi_adjust_cfa_offset -72
    ret
    .cfi_endproc
    .size   _ITM_beginTransaction, .-_ITM_beginTransaction

/* void strobe__tm_longjmp(uint32_t action, const struct tm_jmpbuf *jb):
 * returns from _ITM_beginTransaction once more, with `action`. */
    .globl  strobe__tm_longjmp
    .hidden strobe__tm_longjmp
    .type   strobe__tm_longjmp, @function
    .p2align 4
strobe__tm_longjmp:
    .cfi_startproc
    movq    8(%rsi), %rbx
    movq    16(%rsi), %rbp
    movq    24(%rsi), %r12
    movq    32(%rsi), %r13
    movq    40(%rsi), %r14
    movq    48(%rsi), %r15
    movq    56(%rsi), %rdx
    movq    (%rsi), %rcx
    movl    %edi, %eax
    movq    %rcx, %rsp
    jmp     *%rdx
    .cfi_endproc
    .size   strobe__tm_longjmp, .-strobe__tm_longjmp

    .section .note.GNU-stack,"",@progbits
