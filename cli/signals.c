/*
 * signals.c: the stop flag of `run`, `campaign` and `agent`: SIGINT, SIGTERM
 * and SIGHUP (a closed terminal or ssh session) set it, so each ends
 * cleanly; SIGPIPE is ignored (a peer that closed shows as a write error).
 */
#include <signal.h>
#include <string.h>

#include "cli/commands.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig) {
    (void)sig;
    stop_flag = 1;
}

volatile sig_atomic_t *tb_cli_stop_flag(void) { return &stop_flag; }

void tb_cli_catch_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}
