#!/usr/bin/env python3
"""A leasehold task worker in Python, using only the HTTP API and the standard library.

It claims tasks from a running `leasehold serve` (the seed's task API, documented by the
service's OpenAPI document at /docs/json), works on each one (the demo's work: sleep
`task_data.sleep_duration_seconds`), renews its claim while it works, and completes the task
with the claim's fencing token. A claim that was lost (the service answers 409 `lease_lost`)
is dropped: another worker owns the task now, and this one's result is refused.

    python3 examples/python/task_worker.py --url http://127.0.0.1:4000 [--once]

Environment: LEASEHOLD_API_KEY (a key of scope `write`, when the service has keys).
"""
import argparse
import json
import os
import socket
import sys
import threading
import time
import urllib.error
import urllib.request


class Service:
    """The few task endpoints a worker needs: claim, heartbeat, complete, fail."""

    def __init__(self, url, api_key):
        self.url = url.rstrip("/")
        self.api_key = api_key

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("accept", "application/json")
        if data is not None:
            request.add_header("content-type", "application/json")
        if self.api_key:
            request.add_header("authorization", "Bearer " + self.api_key)
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                text = answer.read()
                return answer.status, (json.loads(text) if text else None)
        except urllib.error.HTTPError as error:
            text = error.read()
            return error.code, (json.loads(text) if text else None)

    def next_task(self, worker_id, lease_seconds):
        status, task = self.call(
            "POST", "/api/tasks/next", {"processor": worker_id, "lease_seconds": lease_seconds}
        )
        if status == 204:
            return None
        if status != 200:
            raise RuntimeError("claim refused: %s %s" % (status, task))
        return task

    def heartbeat(self, task, worker_id, lease_seconds):
        status, _ = self.call(
            "PUT",
            "/api/tasks/%d/heartbeat" % task["id"],
            {"processor": worker_id, "token": task["token"], "lease_seconds": lease_seconds},
        )
        return status == 202

    def complete(self, task, worker_id, output):
        status, answer = self.call(
            "PUT",
            "/api/tasks/%d/complete" % task["id"],
            {"processor": worker_id, "token": task["token"], "task_output": output},
        )
        return status, answer


def work(task, lost):
    """The demo's work: sleep for the task's duration, stopping early if the claim is lost."""
    seconds = float((task.get("task_data") or {}).get("sleep_duration_seconds", 0))
    if lost.wait(seconds):
        return None
    return {"slept_seconds": seconds, "by": "python"}


def run_task(service, task, worker_id, lease_seconds):
    lost = threading.Event()
    done = threading.Event()

    def renew():
        # Renew every third of the lease; a refused renewal means the task is someone else's.
        while not done.wait(lease_seconds / 3):
            if not service.heartbeat(task, worker_id, lease_seconds):
                lost.set()
                return

    renewer = threading.Thread(target=renew, daemon=True)
    renewer.start()
    try:
        output = work(task, lost)
    finally:
        done.set()
        renewer.join()
    if lost.is_set():
        print(json.dumps({"event": "lost", "id": task["id"], "token": task["token"]}), flush=True)
        return
    status, answer = service.complete(task, worker_id, output)
    event = "completed" if status == 202 else "refused"
    print(json.dumps({"event": event, "id": task["id"], "token": task["token"]}), flush=True)
    if status not in (202, 409):
        raise RuntimeError("complete failed: %s %s" % (status, answer))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("LEASEHOLD_URL", "http://127.0.0.1:4000"))
    parser.add_argument("--worker-id", default="py-%s-%d" % (socket.gethostname(), os.getpid()))
    parser.add_argument("--lease", type=float, default=10.0, help="claim duration in seconds")
    parser.add_argument("--poll", type=float, default=0.5, help="seconds between polls when idle")
    parser.add_argument("--once", action="store_true", help="exit when no task is ready")
    o = parser.parse_args()
    service = Service(o.url, os.environ.get("LEASEHOLD_API_KEY"))
    completed = 0
    while True:
        task = service.next_task(o.worker_id, o.lease)
        if task is None:
            if o.once:
                print(json.dumps({"event": "empty", "completed": completed}), flush=True)
                return 0
            time.sleep(o.poll)
            continue
        run_task(service, task, o.worker_id, o.lease)
        completed += 1


if __name__ == "__main__":
    sys.exit(main())
