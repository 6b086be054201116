# stepbox helper, part: the task's verifier run by the helper itself (the `verify` op), over the
# channel no process of the agent's can reach, as verifier.py runs it in an exec of its own:
# every process of the agent's uid killed first (end_agents, by the helper itself), then the verifier as
# that uid in a new bash (cwd the working directory, the image's environment without what
# the agent could have planted: verifier_run.agent_env, stdin /dev/null) with pipes only the
# helper holds, what it left behind killed after. It saves the exec's start (runc, the engine's
# relay, a python of its own: ~150 ms of CPU a verification on a 2-core VM) and its inspect.
# Only an isolated helper (root, out of the agent's reach) answers it, and only for a plain
# verifier: files and a reward folder only the verifier may see stay the runner's.
# One of the helper's parts (programs.json): sent to the sandbox as one source with the prelude,
# the other parts and helper.py, and read in one namespace, so it uses their names as its own.
import os


class Verifier:
    """The `verify` op: the verifier's whole run, answered when it has ended (the helper's loop
    waits meanwhile: a verification is an episode's last act, nothing else is asked of it)."""

    def __init__(self, shells):
        self.shells = shells

    def kill_all(self):
        """Every process of the agent's gone (end_agents: signalled by this helper, whose real
        and saved uid are root's, out of reach of what it kills); True once none is left."""
        return end_agents(AGENT_UID, os.getpid())

    def op_verify(self, req):
        if not ISOLATED:
            raise ToolErr('invalid_arguments', 'verify: this helper runs as the agent; the verifier needs its own exec')
        if int(req['uid']) != AGENT_UID or req['workdir'] != WORKSPACE:
            raise ToolErr('invalid_arguments', 'verify: uid %r and workdir %r are not the agent\'s and the '
                          'working directory' % (req['uid'], req['workdir']))
        command, cap = req['command'], int(req['cap'])
        timeout_ms = max(1, int(req['timeout_ms']))
        me = os.getpid()
        killed = len(agents_of(AGENT_UID, me))
        # Running calls and idle shells go with everything else of the agent's: their ends are
        # met by the loop afterwards, as when the runner's exec killed them.
        if not self.kill_all():
            raise ToolErr('tool_failed', 'the processes of the agent could not be killed; the verifier did not run')
        with as_helper():
            base = container_env()
        # The agent's identity is this helper's filesystem one (set_fs_ids): the access checks
        # and the fresh HOME are the agent's, as in the runner's effective_ids.
        env = agent_env(base)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            os.chdir(WORKSPACE)
            # Unsealed, as the runner starts it (a sealed bash would drop variables it is given).
            pid = spawn_as_agent([bash_on(env), '--norc', '--noprofile', '-c', command], env,
                                 [None, out_w, err_w], seal=False)
        except OSError as e:
            log('verify: cannot start the verifier: %s' % e)
            pid = None
        finally:
            os.close(out_w)
            os.close(err_w)
        code, sig, timed_out, out, err, total_out, total_err = watch_verifier(
            pid, out_r, err_r, timeout_ms, cap, self.kill_all, lambda: agents_of(AGENT_UID, me))
        return ({'killed': killed, 'exit_code': code if code is not None else 128 + sig, 'signal': sig,
                 'timeout': timed_out, 'stdout_len': len(out), 'stdout_total': total_out,
                 'stderr_total': total_err, 'uid': AGENT_UID}, out + err)
