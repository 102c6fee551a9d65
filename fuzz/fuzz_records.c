/* The LIST and SEARCH records the file server writes into the memfd rtn passes it
 * (common/initproto.h gives the format; init/file_server.c writes them), read back and turned into
 * file_list's and file_search's results by serve_files_walk_json (serve/tools/files.c).
 * The server runs inside the sandbox: every length in a record is its to choose. The first
 * byte says which (bit 0: SEARCH), whether the server flagged the result truncated (bit 1),
 * and how the listed path was shown (bits 2-3: "/workspace", "/", "/workspace/dir/", a
 * relative "dir"); two bytes more give the count the server claimed; the rest is the
 * records. Oracles beyond the sanitizers: the result is JSON without a negative number,
 * holds no more entries than the server wrote records, and says truncated when it has fewer
 * than the server claimed. */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "fuzz/fuzz.h"
#include "fuzz/peer.h"
#include "serve/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const shown[] = {"/workspace", "/", "/workspace/dir/", "dir"};
        struct fuzz_in in = {data, size};
        uint8_t how = fuzz_u8(&in);
        uint16_t count = fuzz_u16(&in);
        bool search = how & 1;
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        if (serve_files_walk_json(&b, shown[how >> 2 & 3], search, (const char *)in.p, in.n, count,
                                  how & 2) < 0) {
                rtn_json_buf_free(&b);
                return 0;
        }
        fuzz_check_json(&b);
        struct rtn_json_doc d;
        if (rtn_json_parse(b.data, b.len, 1u << 22, 64, &d, NULL) < 0)
                abort();
        int arr = rtn_json_obj_get(&d, 0, search ? "matches" : "entries");
        int tr = rtn_json_obj_get(&d, 0, "truncated");
        bool truncated = false;
        if (arr < 0 || tr < 0 || rtn_json_get_bool(&d, tr, &truncated) < 0)
                abort();
        int n = d.toks[arr].size;
        size_t min_rec = search ? 8 : 11;
        if ((size_t)n > in.n / min_rec || ((size_t)n < count && !truncated))
                abort();
        rtn_json_doc_free(&d);
        rtn_json_buf_free(&b);
        return 0;
}
