/* rtn-init, embedded in rtn so a sandbox never execs a binary a user could swap on disk:
 * rtn copies these bytes into a sealed memfd and fexecve()s that (runtime/sandbox/initfd.c). */
        .section .rodata
        .balign 16
        .global rtn_init_blob
        .global rtn_init_blob_end
rtn_init_blob:
        .incbin RTN_INIT_PATH
rtn_init_blob_end:
        .section .note.GNU-stack,"",@progbits
