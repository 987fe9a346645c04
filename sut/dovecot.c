/*
 * dovecot.c: the embedded SUT's mail server: Dovecot with IMAP and LMTP on
 * loopback, one generated password for every mail user (DIR/mail.secret,
 * mode 0600), empty maildirs under DIR/mail owned by "nobody".
 *
 * Mail delivery: the load generator speaks LMTP straight to Dovecot (no
 * Postfix in front). LMTP is what an MTA would hand the message to anyway,
 * the client is the same code as for SMTP (LHLO instead of EHLO, one reply
 * per recipient after DATA), and one server less keeps `sut up` fast and the
 * measured work on the mailbox store, which is what the tile's mail workload
 * is about. A real MTA can still be benchmarked: [sut] smtp = HOST:PORT.
 */
#define _DEFAULT_SOURCE /* realpath, mkdtemp */
#include "sut/sut_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * 1 when a server on sut_host():port greets with a line starting with prefix
 * ("* OK" for IMAP, "220" for LMTP) within a second, else 0.
 */
int sut_mail_greets(int port, const char *prefix) {
    char buf[256];
    size_t got = 0;
    int ok = 0, fd = sut_loopback_connect(port);
    if (fd < 0) return 0;
    while (got < sizeof buf - 1 && !memchr(buf, '\n', got)) {
        ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    ok = got >= strlen(prefix) && memcmp(buf, prefix, strlen(prefix)) == 0;
    close(fd);
    return ok;
}

/* A fresh random password for the mail users: 32 hex digits from /dev/urandom. */
int sut_mail_password_new(char *out, size_t len, char *err) {
    unsigned char raw[16];
    size_t got = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        tb_seterr(err, "/dev/urandom: %s", strerror(errno));
        return -1;
    }
    while (got < sizeof raw) {
        ssize_t n = read(fd, raw + got, sizeof raw - got);
        if (n <= 0) {
            tb_seterr(err, "/dev/urandom: %s", n < 0 ? strerror(errno) : "short read");
            close(fd);
            return -1;
        }
        got += (size_t)n;
    }
    close(fd);
    if (len < 2 * sizeof raw + 1) {
        tb_seterr(err, "mail password buffer too small");
        return -1;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

/* Writes DIR/mail.secret (mode 0600): the password, one line. */
int sut_mail_secret_write(const char *dir, const char *password, char *err) {
    char path[PATH_MAX];
    int fd;
    size_t n = strlen(password);
    if (sut_path_join(path, sizeof path, dir, "mail.secret") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    unlink(path);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, password, n) != (ssize_t)n || write(fd, "\n", 1) != 1) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if (close(fd) != 0) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int sut_mail_owner_lookup(mail_owner *mo, char *err) {
    struct passwd pw, *pr = NULL;
    struct group gr, *grp = NULL;
    char buf[4096];
    memset(mo, 0, sizeof *mo);
    if (geteuid() == 0) {
        if (getpwnam_r(SUT_MAIL_OWNER, &pw, buf, sizeof buf, &pr) != 0 || !pr) {
            tb_seterr(err, "user '" SUT_MAIL_OWNER "' does not exist (it owns the embedded Dovecot's maildirs)");
            return -1;
        }
        mo->uid = pw.pw_uid;
        if (getgrnam_r(SUT_MAIL_GROUP, &gr, buf, sizeof buf, &grp) != 0 || !grp) {
            tb_seterr(err, "group '" SUT_MAIL_GROUP "' does not exist (it owns the embedded Dovecot's maildirs)");
            return -1;
        }
        mo->gid = gr.gr_gid;
        sut_copy_str(mo->user, sizeof mo->user, SUT_MAIL_OWNER);
        sut_copy_str(mo->group, sizeof mo->group, SUT_MAIL_GROUP);
        return 0;
    }
    /* Not root: Dovecot runs every process as us (untested beyond a start). */
    mo->uid = geteuid();
    mo->gid = getegid();
    if (getpwuid_r(mo->uid, &pw, buf, sizeof buf, &pr) != 0 || !pr) {
        tb_seterr(err, "cannot find the name of uid %ld for Dovecot's users", (long)mo->uid);
        return -1;
    }
    sut_copy_str(mo->user, sizeof mo->user, pw.pw_name);
    if (getgrgid_r(mo->gid, &gr, buf, sizeof buf, &grp) != 0 || !grp) {
        tb_seterr(err, "cannot find the name of gid %ld for Dovecot's users", (long)mo->gid);
        return -1;
    }
    sut_copy_str(mo->group, sizeof mo->group, gr.gr_name);
    return 0;
}

/* Empties DIR/mail (every `up` starts with empty mailboxes, as the OLTP data
 * is reloaded) and hands it to the mail owner. */
int sut_mail_dir_reset(const char *dir, const mail_owner *mo, char *err) {
    char path[PATH_MAX];
    if (sut_path_join(path, sizeof path, dir, "mail") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    if (sut_remove_tree(path) != 0) {
        tb_seterr(err, "removing %s: %s", path, strerror(errno));
        return -1;
    }
    if (mkdir(path, 0755) != 0 || chmod(path, 0755) != 0) {
        tb_seterr(err, "mkdir %s: %s", path, strerror(errno));
        return -1;
    }
    if (chown(path, mo->uid, mo->gid) != 0) {
        tb_seterr(err, "chown %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/*
 * Writes DIR/dovecot.conf: IMAP and LMTP listeners, static passdb and userdb (checked on Debian
 * 12 with Dovecot 2.3.19). Values are written unquoted: dir comes from
 * realpath and is checked for characters that would need quoting.
 */
int sut_dovecot_write_conf(const char *dir, const char *base, int imap_port, int lmtp_port, const char *password,
                           const mail_owner *mo, char *err) {
    char path[PATH_MAX];
    FILE *f;
    int root = geteuid() == 0;
    if (sut_path_join(path, sizeof path, dir, "dovecot.conf") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    unlink(path); /* it holds the password: recreate with 0600 */
    {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || !(f = fdopen(fd, "w"))) {
            tb_seterr(err, "%s: %s", path, strerror(errno));
            if (fd >= 0) close(fd);
            return -1;
        }
    }
    fprintf(f,
            "# Generated by `tilebench sut up` on every start; edits are overwritten.\n"
            "# The embedded mail server: IMAP and LMTP on loopback, no TLS, one static\n"
            "# password for every user, maildirs in the run folder.\n"
            "base_dir = %s\n"
            "state_dir = %s/dovecot/state\n"
            "log_path = %s/dovecot.log\n"
            "instance_name = tilebench-%d\n"
            "protocols = imap lmtp\n"
            "listen = %s\n"
            "ssl = no\n"
            "disable_plaintext_auth = no\n"
            "auth_mechanisms = plain login\n"
            "# RCPT TO:<tile1-user1@" SUT_MAIL_DOMAIN "> and LOGIN tile1-user1 are the same user\n"
            "auth_username_format = %%Ln\n"
            "mail_location = maildir:%s/mail/%%u\n"
            "passdb {\n  driver = static\n  args = password=%s\n}\n"
            "userdb {\n  driver = static\n  args = uid=%ld gid=%ld home=%s/mail/%%u\n}\n"
            "default_internal_user = %s\n"
            "default_internal_group = %s\n"
            "default_login_user = %s\n"
            "# A benchmark opens many sessions from one address: lift the per-user and\n"
            "# per-process limits that protect a public server.\n"
            "default_process_limit = 2000\n"
            "default_client_limit = 8000\n"
            "mail_max_userip_connections = 100\n"
            "service imap-login {\n"
            "  inet_listener imap {\n    address = %s\n    port = %d\n  }\n"
            "  inet_listener imaps {\n    port = 0\n  }\n"
            "  # high-performance mode: login processes serve many connections\n"
            "  service_count = 0\n"
            "  process_min_avail = 1\n"
            "}\n"
            "service lmtp {\n"
            "  inet_listener lmtp {\n    address = %s\n    port = %d\n  }\n"
            "}\n"
            "protocol lmtp {\n  postmaster_address = postmaster@" SUT_MAIL_DOMAIN "\n}\n",
            base, dir, dir, imap_port, sut_host(), dir, password, (long)mo->uid, (long)mo->gid, dir,
            root ? "dovecot" : mo->user, root ? "dovecot" : mo->group, root ? "dovenull" : mo->user, sut_host(),
            imap_port, sut_host(), lmtp_port);
    if (fclose(f) != 0) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Starts the dovecot master in the foreground (-F), so the pid recorded is
 * the master's own; it forks its imap, lmtp and auth processes itself. */
int sut_dovecot_start(const char *binary, const char *dir, int imap_port, const char *logpath, svc *out, char *err) {
    char conf[PATH_MAX], bin[PATH_MAX];
    pid_t pid;
    if (sut_path_join(conf, sizeof conf, dir, "dovecot.conf") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return TB_SUT_EUSAGE;
    }
    sut_copy_str(bin, sizeof bin, binary);
    char *argv[] = {bin, "-F", "-c", conf, NULL};
    /* Until it opens log_path, dovecot reports config errors on stderr. */
    int sprc;
    pid = sut_spawn_logged(argv, NULL, logpath, &sprc, err);
    if (pid < 0) return sprc;
    sut_svc_record(out, pid, imap_port, binary);
    return 0;
}

typedef struct dovecot_ports {
    int imap, lmtp;
} dovecot_ports;

static int dovecot_greets(void *arg) {
    const dovecot_ports *p = arg;
    return sut_mail_greets(p->imap, "* OK") && sut_mail_greets(p->lmtp, "220");
}

/* Waits until IMAP greets with "* OK" and LMTP with "220". */
int sut_dovecot_wait(const svc *s, int lmtp_port, const char *logpath, uint64_t deadline, char *err) {
    dovecot_ports p = {s->port, lmtp_port};
    int rc = sut_wait_ready("dovecot", s, logpath, deadline, dovecot_greets, &p, err);
    if (rc == 1) {
        tb_seterr(err, "dovecot on ports %d (imap) and %d (lmtp) did not greet within %us, see %s", s->port, lmtp_port,
                  SUT_START_TIMEOUT_US / 1000000u, logpath);
        return TB_SUT_ESTART;
    }
    return rc;
}

/* Characters that would need quoting in dovecot.conf or break the recipe. */
int sut_conf_safe_path(const char *p) {
    for (; *p; p++)
        if (*p == ' ' || *p == '"' || *p == '\\' || *p == '#' || *p == '%' || *p == '$' || *p == '{' || *p == '}' ||
            *p == '\n' || *p == '=')
            return 0;
    return 1;
}
