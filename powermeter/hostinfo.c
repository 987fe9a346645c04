/*
 * hostinfo.c: the host configuration captured once per run (hostinfo.h),
 * from files under a root prefix so tests can hand it a fake tree. Each
 * field is read from the one file the kernel documents for it
 * (Documentation/admin-guide/pm/cpufreq.rst, intel_pstate.rst,
 * amd-pstate.rst, cpuidle sysfs) or tuned's active_profile; a file that is
 * missing or unreadable leaves its field "not available".
 */
#include "powermeter/hostinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#define MAX_TOPO_CPUS 4096
#define CPU_DIR       "sys/devices/system/cpu"

void tb_hostinfo_clear(tb_hostinfo *h, const char *source) {
    memset(h, 0, sizeof *h);
    h->cpus = h->cores = h->sockets = -1;
    h->memory_mib = -1;
    snprintf(h->source, sizeof h->source, "%s", source ? source : "");
}

/* First line of root/rel, trimmed, into buf ("" when unreadable or empty). */
static int first_line(const char *root, const char *rel, char *buf, size_t len) {
    char path[1024];
    FILE *f;
    size_t n;
    buf[0] = '\0';
    snprintf(path, sizeof path, "%s/%s", root, rel);
    if (!(f = fopen(path, "r"))) return -1;
    if (!fgets(buf, (int)len, f)) buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    n = strlen(buf);
    while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    return buf[0] ? 0 : -1;
}

/* /proc/cpuinfo's "model name" (x86) or "Processor"/"cpu model" (others). */
static void read_cpuinfo(const char *root, tb_hostinfo *h) {
    char path[1024], line[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/proc/cpuinfo", root);
    if (!(f = fopen(path, "r"))) return;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Processor", 9) == 0 ||
            strncmp(line, "cpu model", 9) == 0) {
            char *v = colon + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            v[strcspn(v, "\n")] = '\0';
            snprintf(h->cpu_model, sizeof h->cpu_model, "%s", v);
            break;
        }
    }
    fclose(f);
}

static void read_meminfo(const char *root, tb_hostinfo *h) {
    char path[1024], line[256];
    FILE *f;
    snprintf(path, sizeof path, "%s/proc/meminfo", root);
    if (!(f = fopen(path, "r"))) return;
    while (fgets(line, sizeof line, f)) {
        unsigned long long kb;
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
            h->memory_mib = (long long)(kb / 1024);
            break;
        }
    }
    fclose(f);
}

/* os-release's PRETTY_NAME, unquoted. */
static void read_os(const char *root, tb_hostinfo *h) {
    char path[1024], line[256];
    FILE *f;
    snprintf(path, sizeof path, "%s/etc/os-release", root);
    if (!(f = fopen(path, "r"))) return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
            char *v = line + 12;
            v[strcspn(v, "\n")] = '\0';
            if (*v == '"') {
                v++;
                v[strcspn(v, "\"")] = '\0';
            }
            (void)tb_fmt_capped(h->os, sizeof h->os, "%s", v); /* a longer one ends in "..." */
            break;
        }
    }
    fclose(f);
}

/* Parses a cpulist ("0-3,8,10-11") into ids (sorted input assumed). */
static int parse_cpulist(const char *s, int *ids, int cap) {
    int n = 0;
    while (*s && n < cap) {
        char *end;
        long a = strtol(s, &end, 10), b;
        if (end == s || a < 0) break;
        b = a;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
            if (end == s || b < a) break;
        }
        for (long i = a; i <= b && n < cap; i++)
            ids[n++] = (int)i;
        s = end;
        if (*s == ',')
            s++;
        else
            break;
    }
    return n;
}

/* Threads from cpu/online; cores and sockets from each online CPU's topology. */
static void read_topology(const char *root, tb_hostinfo *h) {
    char buf[4096];
    int *ids, n, *pkg, *core, n_core = 0;
    if (first_line(root, CPU_DIR "/online", buf, sizeof buf) != 0) return;
    ids = xmalloc(MAX_TOPO_CPUS * sizeof *ids);
    pkg = xmalloc(MAX_TOPO_CPUS * sizeof *pkg);
    core = xmalloc(MAX_TOPO_CPUS * sizeof *core);
    n = parse_cpulist(buf, ids, MAX_TOPO_CPUS);
    if (n > 0) h->cpus = n;
    for (int i = 0; i < n; i++) {
        char rel[128], v[32];
        int p, c, seen = 0;
        snprintf(rel, sizeof rel, CPU_DIR "/cpu%d/topology/physical_package_id", ids[i]);
        if (first_line(root, rel, v, sizeof v) != 0) break;
        p = atoi(v);
        snprintf(rel, sizeof rel, CPU_DIR "/cpu%d/topology/core_id", ids[i]);
        if (first_line(root, rel, v, sizeof v) != 0) break;
        c = atoi(v);
        for (int j = 0; j < n_core; j++)
            seen |= pkg[j] == p && core[j] == c;
        if (!seen) {
            pkg[n_core] = p;
            core[n_core++] = c;
        }
        if (i == n - 1) {
            int sockets = 0;
            h->cores = n_core;
            for (int j = 0; j < n_core; j++) {
                int dup = 0;
                for (int k = 0; k < j; k++)
                    dup |= pkg[k] == pkg[j];
                sockets += !dup;
            }
            h->sockets = sockets;
        }
    }
    free(ids);
    free(pkg);
    free(core);
}

/* The governor of every online CPU: one name, or "mixed: a, b" when they differ. */
static void read_governor(const char *root, tb_hostinfo *h) {
    char buf[4096];
    int *ids = xmalloc(MAX_TOPO_CPUS * sizeof *ids), n = 0;
    if (first_line(root, CPU_DIR "/online", buf, sizeof buf) == 0) n = parse_cpulist(buf, ids, MAX_TOPO_CPUS);
    if (n == 0) ids[n++] = 0;
    for (int i = 0; i < n; i++) {
        char rel[128], g[64];
        snprintf(rel, sizeof rel, CPU_DIR "/cpu%d/cpufreq/scaling_governor", ids[i]);
        if (first_line(root, rel, g, sizeof g) != 0) continue;
        if (!h->governor[0])
            snprintf(h->governor, sizeof h->governor, "%s", g);
        else if (strcmp(h->governor, g) != 0 && !strstr(h->governor, g)) {
            char tmp[sizeof h->governor];
            (void)tb_fmt_capped(tmp, sizeof tmp, "%s%s, %s", strncmp(h->governor, "mixed: ", 7) ? "mixed: " : "",
                                h->governor, g); /* a list past the field ends in "..." */
            memcpy(h->governor, tmp, sizeof tmp);
        }
    }
    free(ids);
}

static void read_power_policy(const char *root, tb_hostinfo *h) {
    char v[64];
    first_line(root, CPU_DIR "/cpu0/cpufreq/scaling_driver", h->scaling_driver, sizeof h->scaling_driver);
    read_governor(root, h);
    first_line(root, CPU_DIR "/cpu0/cpufreq/energy_performance_preference", h->epp, sizeof h->epp);
    first_line(root, CPU_DIR "/cpu0/power/energy_perf_bias", h->epb, sizeof h->epb);
    /* turbo: intel_pstate's no_turbo (1 = off), else cpufreq's boost (acpi-cpufreq, amd_pstate) */
    if (first_line(root, CPU_DIR "/intel_pstate/no_turbo", v, sizeof v) == 0)
        (void)tb_fmt_capped(h->turbo, sizeof h->turbo, "%s (intel_pstate/no_turbo=%s)",
                            strcmp(v, "0") == 0 ? "on" : "off", v);
    else if (first_line(root, CPU_DIR "/cpufreq/boost", v, sizeof v) == 0)
        (void)tb_fmt_capped(h->turbo, sizeof h->turbo, "%s (cpufreq/boost=%s)", strcmp(v, "0") == 0 ? "off" : "on", v);
    if (first_line(root, CPU_DIR "/intel_pstate/status", v, sizeof v) == 0)
        (void)tb_fmt_capped(h->pstate_status, sizeof h->pstate_status, "intel_pstate %s", v);
    else if (first_line(root, CPU_DIR "/amd_pstate/status", v, sizeof v) == 0)
        (void)tb_fmt_capped(h->pstate_status, sizeof h->pstate_status, "amd_pstate %s", v);
    first_line(root, CPU_DIR "/cpuidle/current_driver", h->cpuidle_driver, sizeof h->cpuidle_driver);
    first_line(root, CPU_DIR "/cpuidle/current_governor_ro", h->cpuidle_governor, sizeof h->cpuidle_governor);
    if (!h->cpuidle_governor[0])
        first_line(root, CPU_DIR "/cpuidle/current_governor", h->cpuidle_governor, sizeof h->cpuidle_governor);
    first_line(root, "etc/tuned/active_profile", h->tuned_profile, sizeof h->tuned_profile);
}

void tb_hostinfo_read_local(const char *root, tb_hostinfo *h) {
    char os[64] = "", rel[128] = "";
    if (!root || !*root) root = "/";
    tb_hostinfo_clear(h, "local");
    first_line(root, "proc/sys/kernel/hostname", h->hostname, sizeof h->hostname);
    first_line(root, "proc/sys/kernel/ostype", os, sizeof os);
    first_line(root, "proc/sys/kernel/osrelease", rel, sizeof rel);
    if (*os && *rel) (void)tb_fmt_capped(h->kernel, sizeof h->kernel, "%s %s", os, rel);
    if (strcmp(root, "/") == 0) {
        struct utsname u;
        if (uname(&u) == 0) (void)tb_fmt_capped(h->arch, sizeof h->arch, "%s", u.machine);
    }
    read_os(root, h);
    read_cpuinfo(root, h);
    read_meminfo(root, h);
    read_topology(root, h);
    read_power_policy(root, h);
}

static void set_str(json_t *o, const char *key, const char *v) {
    json_object_set_new(o, key, v && *v ? json_string(v) : json_null());
}

static void set_int(json_t *o, const char *key, long long v) {
    json_object_set_new(o, key, v >= 0 ? json_integer((json_int_t)v) : json_null());
}

json_t *tb_hostinfo_json(const tb_hostinfo *h) {
    json_t *o = json_object();
    set_str(o, "hostname", h->hostname);
    set_str(o, "kernel", h->kernel);
    set_str(o, "arch", h->arch);
    set_str(o, "os", h->os);
    set_str(o, "cpu_model", h->cpu_model);
    set_int(o, "cpus", h->cpus);
    set_int(o, "cores", h->cores);
    set_int(o, "sockets", h->sockets);
    set_int(o, "memory_mib", h->memory_mib);
    set_str(o, "scaling_driver", h->scaling_driver);
    set_str(o, "governor", h->governor);
    set_str(o, "energy_performance_preference", h->epp);
    set_str(o, "energy_perf_bias", h->epb);
    set_str(o, "turbo", h->turbo);
    set_str(o, "pstate_status", h->pstate_status);
    set_str(o, "cpuidle_driver", h->cpuidle_driver);
    set_str(o, "cpuidle_governor", h->cpuidle_governor);
    set_str(o, "tuned_profile", h->tuned_profile);
    set_str(o, "source", h->source);
    return o;
}
