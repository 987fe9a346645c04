/*
 * setup.c: what the run row records before anything is measured: the open
 * files a sweep needs, the telemetry source (and whether the SUT is on this
 * machine), the SUT host's description, and the run's settings, including
 * the environment variables that change a measurement.
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "agent/remote.h"
#include "common/redact.h"
#include "coordinator/run_ctx.h"
#include "powermeter/hostinfo.h"
#include "powermeter/node_exporter.h"

/* Each user holds up to its workload's sockets_per_user connections (mail:
 * IMAP and SMTP/LMTP, 2; the others 1): refuse a sweep that cannot get its
 * sockets, after raising the soft limit as far as the hard one allows,
 * instead of failing every connect. */
/* Whether host names a server on this machine: loopback, a Unix socket
 * path, or unset (the endpoint is not used). */
static int is_local_host(const char *host) {
    if (!host || !*host || host[0] == '/') return 1;
    return strcmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
           strcmp(host, "[::1]") == 0;
}

/* Host part of "http://HOST:PORT/..." (IPv6 in brackets kept). */
static int url_is_local(const char *url) {
    char host[160];
    const char *p = url, *e;
    if (!url || !*url) return 1;
    if (strncmp(p, "http://", 7) == 0) p += 7;
    e = *p == '[' ? strchr(p, ']') : NULL;
    e = e ? e + 1 : p + strcspn(p, ":/");
    snprintf(host, sizeof host, "%.*s", (int)(e - p), p);
    return is_local_host(host);
}

/* Whether libpq conninfo (key=value or URI) points at this machine; with no
 * host libpq uses the local Unix socket. */
static int conninfo_is_local(const char *conninfo) {
    PQconninfoOption *opts, *o;
    int local = 1;
    if (!conninfo || !*conninfo) return 1;
    if (!(opts = PQconninfoParse(conninfo, NULL))) return 0;
    for (o = opts; o->keyword; o++)
        if ((strcmp(o->keyword, "host") == 0 || strcmp(o->keyword, "hostaddr") == 0) && o->val && *o->val) {
            char *list = xstrdup(o->val), *save = NULL;
            for (char *h = strtok_r(list, ",", &save); h; h = strtok_r(NULL, ",", &save))
                local &= is_local_host(h);
            free(list);
        }
    PQconninfoFree(opts);
    return local;
}

/* Whether every endpoint of an external SUT is on this machine. */
int tb_coord_sut_is_local(const tb_sut_endpoints *ep) {
    int local = conninfo_is_local(ep->pg_conninfo) && is_local_host(ep->redis_host) && is_local_host(ep->imap_host) &&
                is_local_host(ep->lmtp_host) && is_local_host(ep->smtp_host) && url_is_local(ep->web_url);
    for (int i = 0; i < ep->n_pg_tile; i++)
        local &= conninfo_is_local(ep->pg_tile[i].conninfo);
    for (int i = 0; i < ep->n_web_tile; i++)
        local &= url_is_local(ep->web_tile[i].url);
    return local;
}

/*
 * The telemetry source of the run: --telemetry, else [sut] telemetry, else
 * "local" when the SUT runs on this machine (embedded, or every endpoint on
 * loopback), else "none": sampling this machine would describe the load
 * generator, not the SUT. *why says so for the run's events ("" otherwise).
 */
const char *tb_coord_telemetry_choice(const tb_run_opts *o, char *why, size_t len) {
    why[0] = '\0';
    if (o->telemetry && *o->telemetry) return o->telemetry;
    if (o->def->telemetry[0]) return o->def->telemetry;
    if (!o->def->has_sut || tb_coord_sut_is_local(&o->def->sut)) return "local";
    snprintf(why, len,
             "telemetry: none (the SUT's endpoints are not on this machine, so local figures would describe "
             "the load generator); set [sut] telemetry = http://SUT:9100/metrics or run --telemetry URL");
    return "none";
}

/*
 * The run's host object: the SUT host's configuration (hostinfo.h) from the
 * telemetry source: this machine for "local" and "none", the node_exporter
 * otherwise (then this machine, which only generates load, goes under
 * "loadgen_host"). -1 with err when the node_exporter cannot be read.
 */
json_t *tb_coord_host_info(run_ctx *c, char *err) {
    tb_hostinfo h;
    json_t *j;
    if (c->tsrc && strcmp(c->telem_spec, "local") != 0) {
        char *body = NULL;
        size_t len = 0;
        char e[TB_ERR_LEN];
        tb_hostinfo local;
        if (tb_node_exporter_fetch(c->telem_spec, 5000, &body, &len, e) != 0) {
            tb_seterr(err, "telemetry: %s", e);
            return NULL;
        }
        tb_hostinfo_clear(&h, c->telem_shown);
        if (tb_node_exporter_hostinfo(body, len, &h, e) != 0) {
            tb_seterr(err, "telemetry %s: not Prometheus text: %s", c->telem_shown, e);
            free(body);
            return NULL;
        }
        free(body);
        j = tb_hostinfo_json(&h);
        tb_hostinfo_read_local("/", &local);
        json_object_set_new(j, "loadgen_host", tb_hostinfo_json(&local));
    } else {
        tb_hostinfo_read_local("/", &h);
        j = tb_hostinfo_json(&h);
    }
    json_object_set_new(j, "telemetry", json_string(c->telem_shown));
    return j;
}

/* Environment variables that change how the load generator measures
 * (loadgen/worker_env.c) or where power and the SUT's servers come from
 * (powermeter/, sut/sut.c): each one set is recorded with the run. */
static const char *const measurement_env[] = {
    "TB_WORKER_NICE", "TB_WORKER_SPIN_US", "TB_WORKER_SCHED", "TB_PROC_STAT", "TB_RAPL_ROOT",
    "TB_IPMITOOL",    "TB_PG_BINDIR",      "TB_REDIS_SERVER", "TB_DOVECOT",
};

/* {"TB_WORKER_NICE": "5", ...} of the ones set, or NULL when none is. With
 * agents, the workers' own settings are each agent's, not this process's:
 * the TB_WORKER_ ones are left out. */
static json_t *environment(int agents) {
    json_t *env = NULL;
    for (size_t i = 0; i < sizeof measurement_env / sizeof measurement_env[0]; i++) {
        const char *v = getenv(measurement_env[i]);
        if (!v || !*v || (agents && strncmp(measurement_env[i], "TB_WORKER_", 10) == 0)) continue;
        if (!env) env = json_object();
        json_object_set_new(env, measurement_env[i], json_string(v));
    }
    return env;
}

/* The agents asked for: the broker (its password redacted), how many, which. */
static json_t *agents_settings(const tb_remote_opts *ro) {
    char shown[512];
    json_t *a = json_object(), *names = json_array();
    tb_redact_uri(ro->broker_uri, shown, sizeof shown);
    json_object_set_new(a, "broker", json_string(shown));
    json_object_set_new(a, "count", json_integer(ro->agents));
    for (int i = 0; i < ro->n_names; i++)
        json_array_append_new(names, json_string(ro->names[i]));
    json_object_set_new(a, "names", names);
    return a;
}

json_t *tb_coord_settings(const run_ctx *c, json_t *refs) {
    const tb_run_opts *o = c->o;
    json_t *s = json_object(), *env = environment(o->agents != NULL);
    char buf[32];
    json_object_set_new(s, "reference_source", refs);
    json_object_set_new(s, "calibrate", json_boolean(o->calibrate));
    json_object_set_new(s, "interference", json_boolean(o->interference));
    json_object_set_new(s, "tile_file", json_string(o->def->path));
    json_object_set_new(s, "tile_name", json_string(o->def->name));
    json_object_set_new(s, "tiles", json_string(o->tile_spec));
    json_object_set_new(s, "preset", json_string(o->preset));
    tb_format_duration(o->stages.ramp_up_us, buf, sizeof buf);
    json_object_set_new(s, "ramp_up", json_string(buf));
    tb_format_duration(o->stages.warm_up_us, buf, sizeof buf);
    json_object_set_new(s, "warm_up", json_string(buf));
    tb_format_duration(o->stages.steady_us, buf, sizeof buf);
    json_object_set_new(s, "steady", json_string(buf));
    json_object_set_new(s, "phases", json_integer(o->stages.phases));
    tb_format_duration(o->stages.ramp_down_us, buf, sizeof buf);
    json_object_set_new(s, "ramp_down", json_string(buf));
    tb_format_duration(o->stages.idle_us, buf, sizeof buf);
    json_object_set_new(s, "idle", json_string(buf));
    json_object_set_new(s, "repeat", json_integer(o->repeat));
    /* the threads the load generator runs, not the number asked for (0 = the online CPUs) */
    json_object_set_new(s, "loadgen_threads",
                        o->agents ? json_null() /* each agent's: level_agents */
                                  : json_integer(tb_loadgen_local_threads(o->threads)));
    {
        /* the workers' scheduling policy (an agent's: its own, not stored) */
        char err[TB_ERR_LEN];
        const char *sched = o->agents ? NULL : tb_loadgen_local_sched(o->def, err);
        json_object_set_new(s, "loadgen_sched", sched ? json_string(sched) : json_null());
    }
    json_object_set_new(s, "sut", json_string(o->def->has_sut ? "external" : "embedded"));
    json_object_set_new(s, "intended_start_timing", json_true());
    json_object_set_new(s, "telemetry", json_string(c->telem_shown));
    {
        json_t *t = json_array(); /* the inlet temperature sources; [] not measured */
        for (int i = 0; i < o->n_temps; i++) {
            char shown[256];
            tb_redact_uri(o->temp_uris[i], shown, sizeof shown);
            json_array_append_new(t, json_string(shown));
        }
        json_object_set_new(s, "temperature", t);
    }
    if (o->agents) json_object_set_new(s, "agents", agents_settings(o->agents));
    if (o->campaign_json) { /* the campaign's configuration as it ran */
        json_t *cj = json_loads(o->campaign_json, 0, NULL);
        if (cj) json_object_set_new(s, "campaign_config", cj);
    }
    if (env) json_object_set_new(s, "environment", env);
    return s;
}

/* Opens host h's meters (appended to c->meters) and its telemetry source.
 * An exit code; err names the host. */
static int open_host(run_ctx *c, int h, char *err) {
    const tb_host_def *hd = &c->o->def->hosts[h];
    char e[TB_ERR_LEN];
    int r;
    for (int m = 0; m < hd->n_meters; m++) {
        int i = c->n_meters;
        if (i >= TB_MAX_METERS) {
            tb_seterr(err, "[host.%s] meter: more than %d meters over all hosts", hd->name, TB_MAX_METERS);
            return TB_EXIT_USAGE;
        }
        if ((r = tb_meter_open(hd->meters[m], &c->meters[i], e)) != 0) {
            tb_seterr(err, "[host.%s] meter: %s", hd->name, e);
            /* a meter that does not answer aborts (3); a bad URI is a usage error (2) */
            return r == TB_METER_EUNREACH ? TB_EXIT_ABORTED : TB_EXIT_USAGE;
        }
        c->infos[i] = *tb_meter_get_info(c->meters[i]);
        c->meter_host[i] = h;
        c->meter_host_name[i] = hd->name;
        c->n_meters++;
    }
    tb_redact_uri(hd->telemetry, c->host_telem_shown[h], sizeof c->host_telem_shown[h]);
    tb_tiledef_host_tiles(hd, c->host_tiles[h], sizeof c->host_tiles[h]);
    if (strcmp(hd->telemetry, "none") != 0 && tb_telem_source_open(hd->telemetry, &c->host_tsrc[h], e) != 0) {
        tb_seterr(err, "[host.%s] telemetry: %s", hd->name, e);
        return TB_EXIT_USAGE;
    }
    return TB_EXIT_OK;
}

/*
 * A SUT of several hosts: the meters and telemetry come from the tile
 * file's [host.NAME] sections only, so --meter and --telemetry are refused
 * (docs/tile-file.md), as is a sweep reaching a tile no host serves.
 */
int tb_coord_open_hosts(run_ctx *c, char *err) {
    const tb_tiledef *def = c->o->def;
    int rc;
    if (c->o->n_meters > 0) {
        tb_seterr(err, "--meter: the tile file's [host.NAME] sections name the meters (meter = URI in each host); "
                       "give none on the command line");
        return TB_EXIT_USAGE;
    }
    if (c->o->telemetry && *c->o->telemetry) {
        tb_seterr(err, "--telemetry: the tile file's [host.NAME] sections name each host's telemetry; give none "
                       "on the command line");
        return TB_EXIT_USAGE;
    }
    for (int t = 1; t <= c->max_tiles; t++)
        if (tb_tiledef_host_of(def, t) < 0) {
            tb_seterr(err,
                      "--tiles: tile %d is served by no [host.NAME] of %s (add it to a host's tiles, or leave one "
                      "host without a tiles key to serve the rest)",
                      t, def->path);
            return TB_EXIT_USAGE;
        }
    c->n_hosts = def->n_hosts;
    for (int h = 0; h < def->n_hosts; h++)
        if ((rc = open_host(c, h, err)) != TB_EXIT_OK) return rc;
    return TB_EXIT_OK;
}

/* Host h's configuration (hostinfo.h) as compact JSON text (caller frees):
 * this machine's for telemetry local, its node_exporter's for a URL; NULL
 * for none. -1 with err when the node_exporter cannot be read. */
static int host_config(run_ctx *c, int h, char **out, char *err) {
    const char *spec = c->o->def->hosts[h].telemetry;
    tb_hostinfo hi;
    json_t *j;
    *out = NULL;
    if (strcmp(spec, "none") == 0) return 0;
    if (strcmp(spec, "local") == 0) {
        tb_hostinfo_read_local("/", &hi);
    } else {
        char *body = NULL, e[TB_ERR_LEN];
        size_t len = 0;
        int rc;
        if (tb_node_exporter_fetch(spec, 5000, &body, &len, e) != 0) {
            tb_seterr(err, "[host.%s] telemetry: %s", c->o->def->hosts[h].name, e);
            return -1;
        }
        tb_hostinfo_clear(&hi, c->host_telem_shown[h]);
        rc = tb_node_exporter_hostinfo(body, len, &hi, e);
        free(body);
        if (rc != 0) {
            tb_seterr(err, "[host.%s] telemetry %s: not Prometheus text: %s", c->o->def->hosts[h].name,
                      c->host_telem_shown[h], e);
            return -1;
        }
    }
    j = tb_hostinfo_json(&hi);
    *out = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return 0;
}

int tb_coord_host_rows(run_ctx *c, tb_host_info *out, char *err) {
    memset(out, 0, (size_t)c->n_hosts * sizeof *out);
    for (int h = 0; h < c->n_hosts; h++) {
        out[h].name = c->o->def->hosts[h].name;
        out[h].label = c->o->def->hosts[h].label;
        out[h].tiles = c->host_tiles[h];
        out[h].telemetry = c->host_telem_shown[h];
        if (host_config(c, h, (char **)&out[h].host_json, err) != 0) {
            tb_coord_host_rows_free(out, h);
            return -1;
        }
    }
    return 0;
}

void tb_coord_host_rows_free(tb_host_info *rows, int n) {
    for (int h = 0; h < n; h++)
        free((char *)rows[h].host_json);
}
