/* A commit record (store/record.c): the text file whose SHA-256 is a commit's id. Records
 * are read back from the data dir and from import archives, and their message is an agent's
 * (env_commit). store_record_decode must take exactly the canonical spelling. The input is
 * the record. Oracles beyond the sanitizers: a record taken re-encodes to the same bytes,
 * names valid ids, and its message has no NUL and fits STORE_MSG_MAX. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "store/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct store_commit_info c;
        static char msg[STORE_MSG_MAX + 1];
        if (store_record_decode((const char *)data, size, &c, msg, sizeof msg) < 0)
                return 0;
        if (!store_id_valid(c.layer) || (c.parent[0] && !store_id_valid(c.parent)) ||
            c.message != msg || strlen(msg) > STORE_MSG_MAX)
                abort();
        char *again = NULL;
        size_t len = 0;
        if (store_record_encode(&c, msg, &again, &len) < 0)
                abort();
        if (len != size || memcmp(again, data, size))
                abort();
        free(again);
        return 0;
}
