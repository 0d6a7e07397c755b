import { readdirSync, readFileSync } from 'node:fs';

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface LiveProcess {
  pid: number;
  /** Its process group. */
  pgrp: number;
  /** The command line, arguments joined by spaces ('' for a kernel thread). */
  command: string;
}

/**
 * The processes that have not exited, read from /proc, this one left out.
 *
 * A zombie has exited and is left out: it holds no resource but its pid entry, and reaping an
 * orphan is PID 1's job, which some machines' init does seconds late (kill(-pgid, 0) still
 * succeeds for a group of zombies, so it cannot tell "left running" from "not yet reaped").
 */
function liveProcesses(): LiveProcess[] {
  const found: LiveProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the command name in parentheses (which may itself hold spaces): state, ppid, pgrp.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || state === 'X') continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      found.push({ pid: Number(entry), pgrp: Number(pgrp), command });
    } catch {
      // gone between the listing and the read
    }
  }
  return found;
}

/** The live processes of process group `pgid`. */
export function liveProcessesInGroup(pgid: number): LiveProcess[] {
  return liveProcesses().filter((p) => p.pgrp === pgid);
}

/** Live processes whose command line mentions `text`, as `pid: command line`. */
export function processesMentioning(text: string): string[] {
  return liveProcesses()
    .filter((p) => p.command.includes(text))
    .map((p) => `${p.pid}: ${p.command}`);
}
