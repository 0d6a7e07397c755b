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

export interface GroupMember {
  pid: number;
  /** The command line, or '' for a process that has exited (a zombie has none). */
  command: string;
}

/**
 * The processes of a process group that have not exited, read from /proc.
 *
 * A zombie has exited and is left out: it holds no resource but its pid entry, and reaping an
 * orphan is PID 1's job, which some machines' init does seconds late (kill(-pgid, 0) still
 * succeeds for a group of zombies, so it cannot tell "left running" from "not yet reaped").
 */
export function liveProcessesInGroup(pgid: number): GroupMember[] {
  const members: GroupMember[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the command name in parentheses (which may itself hold spaces): state, ppid, pgrp.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) !== pgid || state === 'Z' || state === 'X') continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      members.push({ pid: Number(entry), command });
    } catch {
      // gone between the listing and the read
    }
  }
  return members;
}
