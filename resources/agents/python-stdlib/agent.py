#!/usr/bin/env python3
"""An agent with only the Python standard library, to show that stepbox's two
endpoints are plain HTTP: the model at $OPENAI_BASE_URL (OpenAI Chat Completions)
and the tools at $STEPBOX_MCP_URL (MCP over streamable HTTP, JSON-RPC in a POST).

Run it under stepbox (see ../README.md):
  npx stepbox run resources/agents/python-stdlib --agent 'exec:python3 agent.py' \
      --model scripted:resources/agents/python-stdlib/model.jsonl

`--stamp` puts the current time in the first message: a nondeterministic agent, which
a fork reports as diverged at step 1.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

BASE_URL = os.environ["OPENAI_BASE_URL"]
API_KEY = os.environ["OPENAI_API_KEY"]
MCP_URL = os.environ["STEPBOX_MCP_URL"]
TOKEN = os.environ["STEPBOX_TOKEN"]
MODEL = os.environ["STEPBOX_MODEL"]
GOAL = os.environ["STEPBOX_GOAL"]


def post(url, body, token):
    """POSTs JSON with a bearer token; returns the parsed JSON answer (None when empty)."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": "Bearer " + token,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            text = response.read()
    except urllib.error.HTTPError as e:
        sys.exit(f"{url} answered {e.code}: {e.read().decode(errors='replace')}")
    return json.loads(text) if text else None


class Mcp:
    """The smallest MCP client: initialize, list the tools, call them."""

    def __init__(self):
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "python-stdlib-agent", "version": "1"},
        })
        post(MCP_URL, {"jsonrpc": "2.0", "method": "notifications/initialized"}, TOKEN)

    def request(self, method, params):
        self.next_id += 1
        answer = post(MCP_URL, {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}, TOKEN)
        if "error" in answer:
            sys.exit(f"MCP {method} failed: {answer['error']}")
        return answer["result"]


def main():
    mcp = Mcp()
    tools = [
        {"type": "function", "function": {
            "name": t["name"], "description": t.get("description", ""), "parameters": t["inputSchema"]}}
        for t in mcp.request("tools/list", {})["tools"]
    ]
    system = "You are a careful coding agent. Use the tools; answer in plain text when done."
    if "--stamp" in sys.argv:
        system += " The time is " + time.strftime("%H:%M:%S") + f".{time.time_ns() % 10**9:09d}."
    messages = [{"role": "system", "content": system}, {"role": "user", "content": GOAL}]
    for _ in range(100):
        reply = post(BASE_URL + "/chat/completions", {"model": MODEL, "messages": messages, "tools": tools}, API_KEY)
        message = reply["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        messages.append({"role": "assistant", "content": message.get("content"),
                         **({"tool_calls": calls} if calls else {})})
        if not calls:
            print("final answer:", message.get("content"))
            return
        for call in calls:
            result = mcp.request("tools/call", {
                "name": call["function"]["name"],
                "arguments": json.loads(call["function"]["arguments"] or "{}"),
            })
            text = "".join(part.get("text", "") for part in result["content"])
            print(f"{call['function']['name']} -> {'error' if result.get('isError') else 'ok'}", flush=True)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
    sys.exit("gave up after 100 model calls")


if __name__ == "__main__":
    main()
