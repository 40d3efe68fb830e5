#!/usr/bin/env bash
# A throwaway PostgreSQL server for StrataPostgres's tests, CI (.ci/run) and development.
#
#   scripts/postgres-server.sh start DIR [--stop-when-gone PID]
#       Makes (initdb, first time only) and starts a server whose data are in DIR/data: on
#       127.0.0.1 only, on a free port, with its Unix socket in DIR, fsync on, and WAL for
#       streaming replication (wal_level=replica, max_wal_senders, hot_standby=on). Superuser
#       `strata`, password `strata`; database `strata`. Prints ONE line on stdout, the URL
#       postgresql://strata:strata@127.0.0.1:PORT/strata, and writes it to DIR/url (the port
#       alone to DIR/port). Installs Debian's postgresql-15 first, only if no initdb is found
#       under /usr/lib/postgresql/*/bin (a plain `apt-get install` of an installed server
#       upgrades it). Starting a server that already runs just prints its URL again.
#       With openssl at hand, the server takes TLS (ssl = on) with a certificate for `localhost`
#       signed by an authority made for DIR alone: DIR/ca.crt is what a client names as
#       sslrootcert. Clients choose (sslmode in the URL; Strata, as libpq, prefers TLS).
#   scripts/postgres-server.sh standby DIR PRIMARY_DIR [--stop-when-gone PID]
#       Makes a hot standby of the server started in PRIMARY_DIR (pg_basebackup -R: it streams
#       the primary's WAL and answers read-only queries), starts it on another free port and
#       prints its URL (same user, password and database).
#   scripts/postgres-server.sh promote DIR
#       Promotes the running standby of DIR to a primary (pg_ctl promote), waits until it takes
#       writes, and prints its URL. Its old primary, if still running, also takes writes until
#       it is stopped: two primaries (Docs/Postgres.md, "Replicas").
#   scripts/postgres-server.sh stop DIR
#       Stops the server of DIR (pg_ctl stop -m fast). Removes nothing.
#
# --stop-when-gone PID: a watcher (in the background, detached) stops the server when process
# PID ends, so that a test process that crashes leaves no server behind.
#
# Run as root, the server's processes run as the `postgres` user, which then owns DIR (so
# DIR's parent folders must be searchable by it: a folder of its own under /tmp is). Run as
# another user, they run as that user. The server's log is DIR/server.log; initdb's output is
# in DIR/initdb.log. PG_BINDIR picks the binaries (default: the newest version under
# /usr/lib/postgresql). STRATA_POSTGRES_AUTH picks the authentication method on TCP
# (default scram-sha-256, PostgreSQL's own default; md5 or trust also work); the Unix socket
# is `trust`.
#
# Measured on this machine (Debian 12, PostgreSQL 15, 2 cores, other builds running):
# - `start` in a new folder: 1.2-5.4 s (initdb 1.1-1.3 s of it on an idle disk; the rest is
#   the server's start and CREATE DATABASE, both waiting on fsync, so slower on a busy disk);
# - `start` of a stopped folder: 0.2-0.8 s;
# - `standby`: 0.8-10.7 s (pg_basebackup of a fresh cluster ~0.9 s, then the standby's first
#   start, which fsyncs the whole copied folder);
# - `stop`: 0.1-0.2 s.
set -euo pipefail

USER_NAME=strata
PASSWORD=strata
DATABASE=strata
AUTH=${STRATA_POSTGRES_AUTH:-scram-sha-256}
WAIT_SECONDS=${STRATA_POSTGRES_WAIT_SECONDS:-300}   # a generous bound for every wait

me=$(basename "$0")
die() { echo "$me: $*" >&2; exit 1; }
note() { echo "$me: $*" >&2; }
usage() {
    echo "usage: $me start DIR [--stop-when-gone PID]" >&2
    echo "       $me standby DIR PRIMARY_DIR [--stop-when-gone PID]" >&2
    echo "       $me promote DIR" >&2
    echo "       $me stop DIR" >&2
    exit 2
}

# ---- binaries -------------------------------------------------------------------------

find_bindir() {  # [major version]
    if [[ -n ${PG_BINDIR:-} ]]; then
        [[ -x $PG_BINDIR/initdb ]] || die "PG_BINDIR=$PG_BINDIR has no initdb"
        echo "$PG_BINDIR"; return
    fi
    if [[ -n ${1:-} && -x /usr/lib/postgresql/$1/bin/initdb ]]; then
        echo "/usr/lib/postgresql/$1/bin"; return
    fi
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 || true)
    if [[ -n $found ]]; then dirname "$found"; fi
}

ensure_installed() {
    if [[ -n $(find_bindir) ]]; then return; fi
    note "no initdb under /usr/lib/postgresql/*/bin: installing Debian's postgresql-15"
    [[ $EUID -eq 0 ]] || die "installing postgresql-15 needs root (apt-get install -y postgresql-15)"
    command -v apt-get >/dev/null || die "no apt-get: install PostgreSQL (initdb, pg_ctl) by hand or set PG_BINDIR"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || die "apt-get update failed"
    apt-get install -y -qq postgresql-15 >&2 || die "apt-get install postgresql-15 failed"
    [[ -n $(find_bindir) ]] || die "postgresql-15 installed, yet no initdb under /usr/lib/postgresql/*/bin"
}

# ---- running as the server's user ---------------------------------------------------------

as_pg() {  # run a command as the server's user, from /, so that no cwd permission matters
    if [[ $EUID -eq 0 ]]; then
        if command -v runuser >/dev/null; then
            (cd / && runuser -u postgres -- "$@")
        else
            (cd / && su -s /bin/sh postgres -c "$(printf '%q ' "$@")")
        fi
    else
        (cd / && "$@")
    fi
}

prepare_dir() {  # DIR: create it, hand it to the server's user, check that user can reach it
    local dir=$1
    mkdir -p "$dir"
    if [[ $EUID -eq 0 ]]; then
        id postgres >/dev/null 2>&1 || die "there is no user 'postgres' to run the server as (install postgresql-15, or run as another user)"
        chown postgres: "$dir"
        as_pg test -w "$dir" -a -x "$dir" \
            || die "user postgres cannot reach $dir (a parent folder is not searchable by it); use a folder of its own, such as one made by \`mktemp -d\` directly under /tmp"
    fi
}

abs() { (cd "$1" && pwd -P); }

# ---- ports ------------------------------------------------------------------------------

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
    local port
    if command -v python3 >/dev/null 2>&1 \
        && port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null) \
        && [[ -n $port ]]; then
        echo "$port"; return
    fi
    for _ in $(seq 1 200); do
        port=$((20000 + RANDOM % 40000))
        port_in_use "$port" || { echo "$port"; return; }
    done
    die "found no free port on 127.0.0.1"
}

# ---- configuration ------------------------------------------------------------------------

# The settings of this script live in DATA/strata-server.conf, included (once) at the end of
# postgresql.conf; a standby's copy (pg_basebackup copies it) is rewritten with its own port.
# TLS for the server of DIR: a certificate authority of its own (DIR/ca.crt, the file a client
# names as sslrootcert) and a server certificate it signed, for the name `localhost` only (so
# sslmode=verify-full passes with host localhost and fails with 127.0.0.1, as libpq's would).
# Made once per folder, as the server's user (the server refuses a key others can read).
# Without openssl the server runs without TLS (sslmode=require then cannot connect).
make_certificates() {  # DIR
    local dir=$1
    [[ -f $dir/server.crt && -f $dir/server.key && -f $dir/ca.crt ]] && return 0
    command -v openssl >/dev/null || { note "no openssl: the server runs without TLS"; return 1; }
    printf 'subjectAltName=DNS:localhost\n' | as_pg tee "$dir/server.ext" >/dev/null
    as_pg openssl req -new -x509 -days 3650 -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
        -subj "/CN=Strata test CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" >/dev/null 2>&1 \
        && as_pg openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
            -subj "/CN=localhost" -keyout "$dir/server.key" -out "$dir/server.csr" >/dev/null 2>&1 \
        && as_pg openssl x509 -req -days 3650 -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
            -CAcreateserial -extfile "$dir/server.ext" -out "$dir/server.crt" >/dev/null 2>&1 \
        && as_pg chmod 600 "$dir/server.key" "$dir/ca.key" \
        && as_pg chmod 644 "$dir/ca.crt" "$dir/server.crt" \
        || { note "openssl could not make the certificates: the server runs without TLS"; return 1; }
}

write_conf() {  # DIR PORT ROLE
    local dir=$1 port=$2 role=$3 data=$1/data
    local conf=$data/strata-server.conf
    local ssl=off
    if make_certificates "$dir"; then ssl=on; fi
    {
        echo "# Written by scripts/postgres-server.sh ($role); rewritten on each start."
        echo "listen_addresses = '127.0.0.1'"
        echo "port = $port"
        echo "unix_socket_directories = '$dir'"
        echo "fsync = on"
        echo "synchronous_commit = on"
        echo "full_page_writes = on"
        echo "max_connections = 200"
        echo "password_encryption = '$( [[ $AUTH == md5 ]] && echo md5 || echo scram-sha-256 )'"
        echo "wal_level = replica"
        echo "max_wal_senders = 10"
        echo "max_replication_slots = 10"
        echo "wal_keep_size = '256MB'"
        echo "hot_standby = on"
        echo "hot_standby_feedback = on"
        echo "logging_collector = off"
        echo "log_min_messages = warning"
        echo "log_line_prefix = '%m [%p] %q%u@%d '"
        echo "ssl = $ssl"
        if [[ $ssl == on ]]; then
            echo "ssl_cert_file = '$dir/server.crt'"
            echo "ssl_key_file = '$dir/server.key'"
        fi
    } | as_pg tee "$conf" >/dev/null
    if ! grep -q "^include_if_exists = 'strata-server.conf'" "$data/postgresql.conf"; then
        echo "include_if_exists = 'strata-server.conf'" | as_pg tee -a "$data/postgresql.conf" >/dev/null
    fi
}

write_hba() {  # DATA
    local data=$1
    {
        echo "# Written by scripts/postgres-server.sh: the Unix socket (in the server's folder) is"
        echo "# trusted, TCP on loopback needs the password; nothing else may connect."
        echo "# TYPE  DATABASE        USER            ADDRESS                 METHOD"
        echo "local   all             all                                     trust"
        echo "host    all             all             127.0.0.1/32            $AUTH"
        echo "local   replication     all                                     trust"
        echo "host    replication     all             127.0.0.1/32            $AUTH"
    } | as_pg tee "$data/pg_hba.conf" >/dev/null
}

# ---- starting and waiting -----------------------------------------------------------------

is_running() {  # DIR
    [[ -f $1/data/PG_VERSION ]] && as_pg "$BIN/pg_ctl" -D "$1/data" status >/dev/null 2>&1
}

running_port() {  # DIR: the port of the running server, from its postmaster.pid (4th line)
    sed -n 4p "$1/data/postmaster.pid" 2>/dev/null
}

url_for() { echo "postgresql://$USER_NAME:$PASSWORD@127.0.0.1:$1/$DATABASE"; }

show_log() {  # DIR
    if [[ -f $1/server.log ]]; then
        note "last lines of the server log $1/server.log:"
        tail -n 20 "$1/server.log" | sed 's/^/    /' >&2
    fi
}

# Starts the server of DIR on a free port (trying again on another port if the one picked was
# taken meanwhile), and waits until it accepts connections. Prints the port.
start_server() {  # DIR ROLE
    local dir=$1 role=$2 port attempt
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        write_conf "$dir" "$port" "$role"
        as_pg touch "$dir/server.log"
        if as_pg "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t "$WAIT_SECONDS" start >"$dir/pg_ctl.log" 2>&1; then
            wait_ready "$dir" "$port"
            echo "$port"; return
        fi
        if tail -n 20 "$dir/server.log" | grep -qiE 'could not bind|address already in use|could not create (any TCP/IP sockets|lock file)'; then
            note "port $port was taken (attempt $attempt); trying another"
            as_pg "$BIN/pg_ctl" -D "$dir/data" stop -m immediate >/dev/null 2>&1 || true
            continue
        fi
        cat "$dir/pg_ctl.log" >&2 || true
        show_log "$dir"
        die "the $role server in $dir did not start (log: $dir/server.log)"
    done
    show_log "$dir"
    die "the $role server in $dir found no free port in 5 attempts (log: $dir/server.log)"
}

wait_ready() {  # DIR PORT: until pg_isready says yes (pg_ctl -w already waited), bounded
    local dir=$1 port=$2 deadline=$((SECONDS + WAIT_SECONDS))
    until "$BIN/pg_isready" -q -h 127.0.0.1 -p "$port" -t 5; do
        if (( SECONDS >= deadline )); then
            show_log "$dir"
            die "the server in $dir does not accept connections on 127.0.0.1:$port after ${WAIT_SECONDS}s (log: $dir/server.log)"
        fi
        sleep 0.2
    done
}

psql_as() {  # PORT SQL...
    local port=$1; shift
    PGPASSWORD=$PASSWORD PGCONNECT_TIMEOUT=30 "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U "$USER_NAME" -d postgres -At "$@"
}

publish() {  # DIR PORT: write DIR/url and DIR/port, print the URL
    local url
    url=$(url_for "$2")
    echo "$url" > "$1/url"
    echo "$2" > "$1/port"
    echo "$url"
}

watch_owner() {  # DIR PID: stop the server of DIR once process PID has ended
    local dir=$1 pid=$2
    [[ $pid =~ ^[0-9]+$ ]] || die "--stop-when-gone needs a process id, not '$pid'"
    kill -0 "$pid" 2>/dev/null || die "--stop-when-gone: no process $pid"
    local self
    self=$(cd "$(dirname "$0")" && pwd -P)/$(basename "$0")
    # Detached (its own session), with no inherited output: whoever reads our stdout to its
    # end must not wait for the watcher.
    setsid bash -c '
        while kill -0 "$1" 2>/dev/null && [[ -f "$2/data/postmaster.pid" ]]; do sleep 1; done
        [[ -f "$2/data/postmaster.pid" ]] && "$3" stop "$2"
    ' watcher "$pid" "$dir" "$self" </dev/null >>"$dir/watcher.log" 2>&1 &
    echo $! > "$dir/watcher.pid"
}

# ---- commands -----------------------------------------------------------------------------

cmd_start() {  # DIR [--stop-when-gone PID]
    local dir=$1 owner=${3:-}
    [[ $# -eq 1 || ( $# -eq 3 && $2 == --stop-when-gone ) ]] || usage
    ensure_installed
    prepare_dir "$dir"
    dir=$(abs "$dir")
    # The socket's path (DIR/.s.PGSQL.PORT) must fit in 107 bytes.
    (( ${#dir} <= 90 )) || die "DIR is too long for a Unix socket path (${#dir} characters; at most 90): $dir"
    local data=$dir/data
    BIN=$(find_bindir "$(cat "$data/PG_VERSION" 2>/dev/null || true)")
    [[ -n $BIN ]] || die "no PostgreSQL binaries found"

    [[ ! -f $data/standby.signal ]] || die "$dir holds a standby: start it with \`$me standby $dir PRIMARY_DIR\`"
    if is_running "$dir"; then
        local port; port=$(running_port "$dir")
        [[ -n $port ]] || die "a server runs in $dir but its port is unknown (see $data/postmaster.pid)"
        wait_ready "$dir" "$port"
        [[ -z $owner ]] || watch_owner "$dir" "$owner"
        publish "$dir" "$port"; return
    fi

    if [[ ! -f $data/PG_VERSION ]]; then
        [[ ! -e $data ]] || [[ -z $(ls -A "$data") ]] || die "$data exists and is not a PostgreSQL data folder: remove it or choose another DIR"
        local pwfile=$dir/.pwfile
        echo "$PASSWORD" > "$pwfile"
        [[ $EUID -ne 0 ]] || chown postgres: "$pwfile"
        chmod 600 "$pwfile"
        # Collation by code point (C.UTF-8, or C where that locale is missing): the same on
        # every machine.
        local locale=C.UTF-8
        locale -a 2>/dev/null | grep -qiE '^c\.utf-?8$' || locale=C
        if ! as_pg "$BIN/initdb" -D "$data" -U "$USER_NAME" --pwfile="$pwfile" \
                --auth-local=trust --auth-host="$AUTH" -E UTF8 --locale="$locale" >"$dir/initdb.log" 2>&1; then
            rm -f "$pwfile"
            cat "$dir/initdb.log" >&2
            die "initdb failed (output: $dir/initdb.log)"
        fi
        rm -f "$pwfile"
        write_hba "$data"
    fi

    local port; port=$(start_server "$dir" primary)
    if [[ $(psql_as "$port" -c "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'") != 1 ]]; then
        psql_as "$port" -c "CREATE DATABASE $DATABASE" || { show_log "$dir"; die "could not create database $DATABASE (log: $dir/server.log)"; }
    fi
    [[ -z $owner ]] || watch_owner "$dir" "$owner"
    publish "$dir" "$port"
}

cmd_standby() {  # DIR PRIMARY_DIR [--stop-when-gone PID]
    local dir=$1 primary=$2 owner=${4:-}
    [[ $# -eq 2 || ( $# -eq 4 && $3 == --stop-when-gone ) ]] || usage
    [[ -d $primary ]] || die "no primary folder $primary"
    primary=$(abs "$primary")
    [[ -f $primary/data/PG_VERSION ]] || die "$primary holds no server (start it with \`$me start $primary\`)"
    BIN=$(find_bindir "$(cat "$primary/data/PG_VERSION")")
    [[ -n $BIN ]] || die "no PostgreSQL binaries for version $(cat "$primary/data/PG_VERSION")"
    is_running "$primary" || die "the primary in $primary is not running (start it with \`$me start $primary\`)"
    local pport; pport=$(running_port "$primary")

    prepare_dir "$dir"
    dir=$(abs "$dir")
    [[ $dir != "$primary" ]] || die "the standby needs a folder of its own, not the primary's"
    (( ${#dir} <= 90 )) || die "DIR is too long for a Unix socket path (${#dir} characters; at most 90): $dir"
    local data=$dir/data
    if [[ -f $data/PG_VERSION && ! -f $data/standby.signal ]]; then
        die "$dir holds a server that is not a standby (promoted?); start it with \`$me start $dir\`"
    fi

    if is_running "$dir"; then
        local port; port=$(running_port "$dir")
        wait_ready "$dir" "$port"
        [[ -z $owner ]] || watch_owner "$dir" "$owner"
        publish "$dir" "$port"; return
    fi

    if [[ ! -f $data/PG_VERSION ]]; then
        [[ ! -e $data ]] || [[ -z $(ls -A "$data") ]] || die "$data exists and is not a PostgreSQL data folder: remove it or choose another DIR"
        # -R writes standby.signal and primary_conninfo (with the password); -X stream copies
        # the WAL written meanwhile; -c fast checkpoints at once instead of spreading it.
        if ! as_pg env PGPASSWORD="$PASSWORD" PGCONNECT_TIMEOUT=30 "$BIN/pg_basebackup" \
                -h 127.0.0.1 -p "$pport" -U "$USER_NAME" -D "$data" -R -X stream -c fast \
                >"$dir/basebackup.log" 2>&1; then
            cat "$dir/basebackup.log" >&2
            die "pg_basebackup from the primary in $primary (127.0.0.1:$pport) failed (output: $dir/basebackup.log; primary's log: $primary/server.log)"
        fi
        # The primary's own files, copied along, are not the standby's.
        rm -f "$data/postmaster.opts"
        echo "$primary" > "$dir/primary"
    else
        # Restarting a standby: its primary may have restarted on another port since.
        as_pg sed -i "s/^\(primary_conninfo = '.* port=\)[0-9]*/\1$pport/" "$data/postgresql.auto.conf"
    fi

    local port; port=$(start_server "$dir" standby)
    [[ $(psql_as "$port" -c "SELECT pg_is_in_recovery()") == t ]] \
        || { show_log "$dir"; die "the server in $dir started but is not in recovery (not a standby)"; }
    [[ -z $owner ]] || watch_owner "$dir" "$owner"
    publish "$dir" "$port"
}

cmd_promote() {  # DIR
    [[ $# -eq 1 ]] || usage
    local dir=$1
    [[ -d $dir ]] || die "no folder $dir"
    dir=$(abs "$dir")
    [[ -f $dir/data/PG_VERSION ]] || die "no server in $dir"
    BIN=$(find_bindir "$(cat "$dir/data/PG_VERSION")")
    [[ -n $BIN ]] || die "no PostgreSQL binaries found"
    is_running "$dir" || die "the server in $dir is not running"
    local port; port=$(running_port "$dir")
    if [[ $(psql_as "$port" -c "SELECT pg_is_in_recovery()") == t ]]; then
        as_pg "$BIN/pg_ctl" -D "$dir/data" promote -w -t "$WAIT_SECONDS" >"$dir/pg_ctl.log" 2>&1 || {
            cat "$dir/pg_ctl.log" >&2
            show_log "$dir"
            die "could not promote the server in $dir (log: $dir/server.log)"
        }
    fi
    [[ $(psql_as "$port" -c "SELECT pg_is_in_recovery()") == f ]] \
        || { show_log "$dir"; die "the server in $dir is still in recovery after its promotion"; }
    publish "$dir" "$port"
}

cmd_stop() {  # DIR
    [[ $# -eq 1 ]] || usage
    local dir=$1
    [[ -d $dir ]] || { note "no folder $dir: nothing to stop"; return 0; }
    dir=$(abs "$dir")
    if [[ ! -f $dir/data/PG_VERSION ]]; then note "no server in $dir: nothing to stop"; return 0; fi
    BIN=$(find_bindir "$(cat "$dir/data/PG_VERSION")")
    [[ -n $BIN ]] || die "no PostgreSQL binaries found"
    if ! is_running "$dir"; then note "the server in $dir is not running"; return 0; fi
    as_pg "$BIN/pg_ctl" -D "$dir/data" stop -m fast -w -t "$WAIT_SECONDS" >"$dir/pg_ctl.log" 2>&1 || {
        cat "$dir/pg_ctl.log" >&2
        show_log "$dir"
        die "could not stop the server in $dir (log: $dir/server.log)"
    }
}

[[ $# -ge 1 ]] || usage
command=$1; shift
case $command in
    start)   [[ $# -ge 1 ]] || usage; cmd_start "$@" ;;
    standby) [[ $# -ge 2 ]] || usage; cmd_standby "$@" ;;
    promote) [[ $# -ge 1 ]] || usage; cmd_promote "$@" ;;
    stop)    [[ $# -ge 1 ]] || usage; cmd_stop "$@" ;;
    *) usage ;;
esac
