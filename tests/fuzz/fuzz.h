/*
 * fuzz.h: helpers shared by the libFuzzer targets (tests/fuzz/fuzz_*.c).
 * Each target defines LLVMFuzzerTestOneInput and feeds the raw input to one
 * parser; ASan/UBSan (and the asserts below) turn a bad read or an
 * inconsistent answer into a crash that libFuzzer reports and saves.
 */
#ifndef TB_TESTS_FUZZ_H
#define TB_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated heap copy of data[0..size) (caller frees). Parsers of
 * text lines take C strings; an exact-size allocation lets ASan catch a read
 * past the terminator. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (!s) abort();
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Fails the input with a message (libFuzzer saves it as a crash). */
#define FUZZ_CHECK(cond)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                                   \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

#endif
