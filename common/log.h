/* Logging to stderr with a level threshold. Library code logs at debug only (house style);
 * main() and the MCP loop report errors. RTN_LOG=debug|info|warn|error sets the level. */
#pragma once

enum rtn_log_level { RTN_LOG_DEBUG, RTN_LOG_INFO, RTN_LOG_WARN, RTN_LOG_ERROR };

/* The values RTN_LOG accepts, for messages and --help. */
#define RTN_LOG_LEVELS "debug, info, warn, error"

/* Reads RTN_LOG (unset or empty: warn). -EINVAL when it names no level of RTN_LOG_LEVELS;
 * the level then stays the default. */
int rtn_log_init(const char *prog);
void rtn_log_set_level(enum rtn_log_level lvl);
enum rtn_log_level rtn_log_get_level(void);
void rtn_log(enum rtn_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) rtn_log(RTN_LOG_DEBUG, __VA_ARGS__)
#define log_info(...) rtn_log(RTN_LOG_INFO, __VA_ARGS__)
#define log_warn(...) rtn_log(RTN_LOG_WARN, __VA_ARGS__)
#define log_error(...) rtn_log(RTN_LOG_ERROR, __VA_ARGS__)
