#!/usr/bin/env bash
# rtn exec --keep and --commit with the upper on a tmpfs of its own (docs/architecture.md,
# "Bounded disk"): the pending changes are the next run's top layer and each run's tmpfs is
# laid over them (files added, changed and deleted, directories made opaque, hard links and
# holes kept), the pending changes and a run's tmpfs share --upper-size, and rtn reset and
# rtn commit give the room back.
. "$(dirname "$0")/../lib.sh"
t_need_rtn
export RTN_DATA_DIR

keep_layers() {
        RTN_DATA_DIR=$T_TMP/data
        t_exec --commit -- sh -c 'mkdir -p /var/tmp/d/sub && echo base > /var/tmp/d/sub/f && echo gone > /var/tmp/g'
        t_exit_is 0
        t_exec --keep -- sh -c 'rm /var/tmp/g && echo new > /var/tmp/n && echo more >> /var/tmp/d/sub/f &&
                truncate -s 50M /var/tmp/sparse && echo l > /var/tmp/l1 && ln /var/tmp/l1 /var/tmp/l2'
        t_exit_is 0
        t_cmd "$RTN" diff
        t_stdout_has "D /var/tmp/g"
        t_stdout_has "A /var/tmp/n"
        t_stdout_has "M /var/tmp/d/sub/f"
        # the second run sees the first's changes and replaces a directory wholesale
        t_exec --keep -- sh -c 'cat /var/tmp/n /var/tmp/d/sub/f; ls /var/tmp/g 2>&1; rm -r /var/tmp/d &&
                mkdir /var/tmp/d && echo only > /var/tmp/d/x'
        t_exit_is 0
        t_stdout_has "new"
        t_stdout_has "more"
        t_stdout_has "No such file"
        t_exec --keep -- sh -c 'ls /var/tmp/d; stat -c "%h %b" /var/tmp/l1 /var/tmp/sparse'
        t_stdout_is "$(printf 'x\n2 8\n1 0')"
        t_cmd "$RTN" commit -m kept
        t_exit_is 0
        t_exec -- sh -c 'ls /var/tmp/d; cat /var/tmp/n; ls /var/tmp/g 2>&1'
        t_stdout_has "x"
        t_stdout_has "new"
        t_stdout_has "No such file"
}

keep_room() {
        RTN_DATA_DIR=$T_TMP/data
        t_exec --keep --upper-size 8M -- sh -c 'dd if=/dev/urandom of=/var/tmp/a bs=1M count=5 2>&1 | tail -1'
        t_exit_is 0
        # the pending 5 MiB and this run's tmpfs share the 8 MiB
        t_exec --keep --upper-size 8M -- sh -c 'dd if=/dev/urandom of=/var/tmp/b bs=1M count=5 2>&1; true'
        t_stdout_has "No space left on device"
        t_exec --keep --upper-size 4M -- true
        t_exit_is 125
        t_stderr_has "the pending changes of environment default take"
        t_cmd "$RTN" reset
        t_exit_is 0
        t_exec --keep --upper-size 8M -- sh -c 'dd if=/dev/urandom of=/var/tmp/b bs=1M count=5 2>&1 | tail -1'
        t_exit_is 0
        t_stdout_has "5242880 bytes"
}

# Modes the agent set stop none of it: a directory it made unreadable (000) and a file
# in it are committed, kept, merged, listed, verified and exported, for every caller
# (the work runs as the sandbox's root, in a user namespace mapped like the sandbox, also
# for a caller without a subordinate range, whose rtn would otherwise be refused by them).
unreadable_dirs() {
        RTN_DATA_DIR=$T_TMP/data
        t_exec --commit -m one -- sh -c 'mkdir $HOME/d && echo s > $HOME/d/f && chmod 000 $HOME/d'
        t_exit_is 0
        t_exec --keep -- sh -c 'mkdir $HOME/e && echo t > $HOME/e/f && chmod 000 $HOME/e'
        t_exit_is 0
        t_exec --keep -- sh -c 'chmod 700 $HOME/e && echo u >> $HOME/e/f && chmod 000 $HOME/e'
        t_exit_is 0
        t_exit_is 0 "$RTN" diff
        t_stdout_has "/e/f"
        t_exit_is 0 "$RTN" commit -m two
        t_exec -- sh -c 'stat -c %a $HOME/d $HOME/e; chmod 700 $HOME/d $HOME/e; cat $HOME/d/f $HOME/e/f'
        t_exit_is 0
        t_stdout_is "0
0
s
t
u"
        t_exit_is 0 "$RTN" store verify
        t_exit_is 0 "$RTN" export -o "$T_TMP/x.tar.zst"
        t_exit_is 0 "$RTN" gc
}

t_run exec_keep_layers keep_layers
t_run exec_keep_room keep_room
t_run exec_keep_unreadable_dirs unreadable_dirs
t_done
