"""Schemathesis hooks for the portal: a real session cookie for the runs that have an account.

Loaded by schemathesis from SCHEMATHESIS_HOOKS. Without FUZZ_USERNAME (the run without a
session) it registers nothing, so every request goes out without a cookie.

The session comes from logging in through POST /api/user/login, as a browser would. The fuzzer
itself may end that session (POST /api/user/logout with the cookie) or, as an administrator,
rename its own account (PUT /api/user/admin/{id}); so:
- a 401 answer makes schemathesis log in again and replay the request (its re-authentication
  on the statuses in retry_on, 401 by default), and
- the username to log in with follows the account's own renames (and is written to
  FUZZ_STATE_FILE for run.mjs).
"""

from __future__ import annotations

import json
import os
import threading

import requests
import schemathesis

COOKIE = os.environ.get("FUZZ_COOKIE_NAME", "portal_session")
BASE_URL = os.environ.get("FUZZ_BASE_URL", "").rstrip("/")
STATE_FILE = os.environ.get("FUZZ_STATE_FILE")


class _Account:
    def __init__(self, username: str, password: str) -> None:
        self.username = username
        self.password = password
        self.user_id: str | None = None
        self.lock = threading.Lock()


# tus sends upload bytes as application/offset+octet-stream: raw bytes, like application/octet-stream.
schemathesis.serializer.alias("application/offset+octet-stream", "application/octet-stream")

_account = _Account(os.environ["FUZZ_USERNAME"], os.environ["FUZZ_PASSWORD"]) if os.environ.get("FUZZ_USERNAME") else None


if _account is not None:
    account = _account

    @schemathesis.auth(refresh_interval=3600)
    class SessionCookie:
        def get(self, case, context):
            with account.lock:
                username = account.username
            response = requests.post(
                f"{BASE_URL}/api/user/login",
                json={"username": username, "password": account.password},
                timeout=30,
            )
            if response.status_code != 200:
                raise RuntimeError(f"login as {username!r} failed: {response.status_code} {response.text[:300]}")
            with account.lock:
                account.user_id = response.json()["id"]
            token = response.cookies.get(COOKIE)
            if not token:
                raise RuntimeError(f"login answered without a {COOKIE} cookie")
            return token

        def set(self, case, data, context):
            case.cookies = {**(case.cookies or {}), COOKIE: data}

    @schemathesis.hook
    def after_call(context, case, response):
        # An administrator's edit of their own account may change the username we log in with.
        if response.status_code != 200 or case.operation.path != "/api/user/admin/{id}":
            return
        try:
            body = response.json()
        except ValueError:
            return
        with account.lock:
            if isinstance(body, dict) and body.get("id") == account.user_id and isinstance(body.get("username"), str):
                account.username = body["username"]
                # Tell run.mjs, which logs in again after this run to set the portal up for the next.
                if STATE_FILE:
                    with open(STATE_FILE, "w", encoding="utf-8") as state:
                        json.dump({"username": account.username}, state)
