#!/usr/bin/env bash
# four copies of the README's suite at once (pytest -n 6 --dist loadfile), each in its own clone of HEAD,
# its own linkroof first on the path (the clone's, not the editable install's)
for i in 1 2 3 4; do rm -rf /tmp/par$i; git clone -q /work/main /tmp/par$i; done
start=$(date +%s)
for i in 1 2 3 4; do
  (cd /tmp/par$i && PYTHONPATH=/tmp/par$i /work/main/.venv/bin/python -m pytest -n 6 --dist loadfile \
     -p no:cacheprovider -q > /tmp/par$i.log 2>&1; echo "rc=$?" >> /tmp/par$i.log) &
done
wait
echo "all done in $(( $(date +%s) - start )) s" > /tmp/par.done
