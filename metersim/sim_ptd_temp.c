/*
 * sim_ptd_temp.c: the PTDaemon temperature-mode dialect of the emulator
 * (protocol "ptd-temp", sim_private.h). A PTDaemon started for a
 * temperature sensor answers Hello and Identify as for power, but says
 * mode=temperature, and its RL sample line carries Temperature (degrees C)
 * and Humidity (%) instead of Watts, Volts, Amps and PF. The source (the
 * constant --watts, or the trace's value column) is served as degrees C, so
 * a trace "t_s,C" drives the inlet temperature a test sees. Commands:
 * Hello, Identify, Go, Stop, RL; anything else "Unknown command".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "metersim/sim_private.h"

#define SIM_TEMP_HUMIDITY 40.0 /* %, served as is */

static void temp_rl(tb_msim *m, client *c) {
    char out[256], ts[80];
    uint64_t now = tb_now_us();
    int64_t wall = tb_wall_us();
    time_t secs = (time_t)(wall / 1000000);
    struct tm tm;
    double celsius = sim_source_watts(m, now);
    localtime_r(&secs, &tm);
    snprintf(ts, sizeof ts, "%02d-%02d-%04d %02d:%02d:%02d.%03d", tm.tm_mon + 1, tm.tm_mday, tm.tm_year + 1900,
             tm.tm_hour, tm.tm_min, tm.tm_sec, (int)((wall / 1000) % 1000));
    m->c.requests++;
    m->c.served++;
    m->c.valid++;
    snprintf(out, sizeof out, "Last 1 sample\r\nTime,%s,Temperature,%.2f,Humidity,%.1f\r\n", ts, celsius,
             SIM_TEMP_HUMIDITY);
    sim_put(c, out);
}

int sim_ptd_temp_line(tb_msim *m, client *c, const char *line) {
    if (strcasecmp(line, "tb:count?") == 0) {
        sim_put_counters(m, c, "\r\n");
    } else if (strcmp(line, "Hello") == 0) {
        sim_put(c, "Hello, PTDaemon here!\r\n");
    } else if (strcmp(line, "Identify") == 0) {
        sim_put(c, "DummyTemperature,1000,0,0,0,0,0,0,1,version=1.9.2-tilebench-sim,OS=Linux,mode=temperature,"
                   "1,1,1,0,0,no_cal_date,na\r\n");
    } else if (strncmp(line, "Go,", 3) == 0) {
        if (m->running) {
            sim_put(c, "Error: measurement already running\r\n");
        } else {
            m->running = 1;
            sim_put(c, "Starting untimed measurement, maximum 500000 samples at 1000ms with 0 rampup samples\r\n");
        }
    } else if (strcmp(line, "Stop") == 0) {
        sim_put(c, m->running ? "Stopping untimed measurement\r\n" : "Error: no measurement to stop\r\n");
        m->running = 0;
    } else if (strncmp(line, "RL", 2) == 0 && (line[2] == '\0' || line[2] == ',')) {
        if (m->running)
            temp_rl(m, c);
        else
            sim_put(c, "Error: no measurement running\r\n");
    } else {
        sim_put(c, "Unknown command\r\n");
    }
    return SIM_REPLY;
}
