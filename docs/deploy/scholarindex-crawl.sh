#!/bin/sh
# Run one scheduled crawl job, for cron:   scholarindex-crawl.sh JOB
#
# Reads /etc/scholarindex/scholarindex.env (and JOB.env if there), crawls the URLs in
# /etc/scholarindex/JOB.urls with a JOBDIR of its own (an interrupted run resumes on
# the next start), appends the log to /var/log/scholarindex/JOB.log, and exits with
# the crawl's status (docs/deploy/README.md). Cron mails what a job prints: this
# prints nothing when the run is ok, and the verdict line when it is not.
# SCHOLARINDEX_HOME, _ETC, _VAR, _LOGS and _SCRAPY override the paths.
set -u
job=${1:?usage: scholarindex-crawl.sh JOB}
home=${SCHOLARINDEX_HOME:-/srv/scholarindex}
etc=${SCHOLARINDEX_ETC:-/etc/scholarindex}
var=${SCHOLARINDEX_VAR:-/var/lib/scholarindex}
logs=${SCHOLARINDEX_LOGS:-/var/log/scholarindex}
scrapy=${SCHOLARINDEX_SCRAPY:-$home/.venv/bin/scrapy}

set -a
. "$etc/scholarindex.env" || exit 2
if [ -f "$etc/$job.env" ]; then . "$etc/$job.env" || exit 2; fi
set +a
export RUN_JOB="$job"
mkdir -p "$var/jobdir" "$logs" || exit 2
log="$logs/$job.log"

cd "$home" || exit 2
"$scrapy" crawl profiles -a url_file="$etc/$job.urls" -s JOBDIR="$var/jobdir/$job" \
    -s TELNETCONSOLE_ENABLED=false -s REMOTE_CONTROL_ENABLED=false >>"$log" 2>&1
status=$?
if [ "$status" -ne 0 ]; then
    echo "scholarindex crawl $job: exit $status: $(tail -n 1 "$log")"
fi
exit "$status"
