#!/usr/bin/env python3
"""An agent with only the Python standard library, to show that stepbox's two
endpoints are plain HTTP: the model at $OPENAI_BASE_URL (OpenAI Chat Completions)
and the tools at $STEPBOX_MCP_URL (MCP over streamable HTTP, JSON-RPC in a POST).

Run it under stepbox (see ../README.md):
  npx stepbox run resources/agents/python-stdlib --agent 'exec:python3 agent.py' \
      --model scripted:resources/agents/python-stdlib/model.jsonl

`--stamp` puts the current time in the first message: a nondeterministic agent, which
a fork reports as diverged at step 1. `--api responses` speaks the OpenAI Responses API
and `--api anthropic` the Anthropic Messages API ($ANTHROPIC_BASE_URL + /v1/messages,
key in x-api-key) instead of Chat Completions: the same endpoint answers all three.
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


def post(url, body, token, headers=None):
    """POSTs JSON with a bearer token (or `headers`); returns the parsed JSON answer (None when empty)."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {"Authorization": "Bearer " + token}),
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


class Chat:
    """OpenAI Chat Completions: messages, tool_calls, role tool results."""

    def __init__(self, system, tools):
        self.tools = [{"type": "function", "function": {
            "name": t["name"], "description": t.get("description", ""), "parameters": t["inputSchema"]}}
            for t in tools]
        self.messages = [{"role": "system", "content": system}, {"role": "user", "content": GOAL}]

    def ask(self):
        """One model call; returns (text, [(call_id, name, arguments)])."""
        reply = post(BASE_URL + "/chat/completions",
                     {"model": MODEL, "messages": self.messages, "tools": self.tools}, API_KEY)
        message = reply["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        self.messages.append({"role": "assistant", "content": message.get("content"),
                              **({"tool_calls": calls} if calls else {})})
        return message.get("content"), [
            (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"] or "{}")) for c in calls]

    def tell(self, results):
        for call_id, text, _ in results:
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": text})


class Responses:
    """The OpenAI Responses API: input items, function_call / function_call_output."""

    def __init__(self, system, tools):
        self.system = system
        self.tools = [{"type": "function", "name": t["name"], "description": t.get("description", ""),
                       "parameters": t["inputSchema"]} for t in tools]
        self.input = [{"role": "user", "content": GOAL}]

    def ask(self):
        reply = post(BASE_URL + "/responses", {"model": MODEL, "instructions": self.system,
                                               "input": self.input, "tools": self.tools}, API_KEY)
        text, calls = "", []
        for item in reply["output"]:
            if item["type"] == "message":
                text += "".join(p.get("text", "") for p in item["content"])
                self.input.append({"role": "assistant", "content": text})
            elif item["type"] == "function_call":
                self.input.append({"type": "function_call", "call_id": item["call_id"],
                                   "name": item["name"], "arguments": item["arguments"]})
                calls.append((item["call_id"], item["name"], json.loads(item["arguments"] or "{}")))
        return text, calls

    def tell(self, results):
        for call_id, text, _ in results:
            self.input.append({"type": "function_call_output", "call_id": call_id, "output": text})


class Messages:
    """The Anthropic Messages API: system, tool_use and tool_result content blocks."""

    def __init__(self, system, tools):
        self.system = system
        self.tools = [{"name": t["name"], "description": t.get("description", ""),
                       "input_schema": t["inputSchema"]} for t in tools]
        self.messages = [{"role": "user", "content": GOAL}]

    def ask(self):
        reply = post(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
                     {"model": MODEL, "max_tokens": 4096, "system": self.system,
                      "messages": self.messages, "tools": self.tools}, None,
                     {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01"})
        self.messages.append({"role": "assistant", "content": reply["content"]})
        text = "".join(b["text"] for b in reply["content"] if b["type"] == "text")
        calls = [(b["id"], b["name"], b["input"]) for b in reply["content"] if b["type"] == "tool_use"]
        return text, calls

    def tell(self, results):
        self.messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": failed}
            for call_id, text, failed in results]})


APIS = {"chat": Chat, "responses": Responses, "anthropic": Messages}


def main():
    mcp = Mcp()
    tools = mcp.request("tools/list", {})["tools"]
    system = "You are a careful coding agent. Use the tools; answer in plain text when done."
    if "--stamp" in sys.argv:
        system += " The time is " + time.strftime("%H:%M:%S") + f".{time.time_ns() % 10**9:09d}."
    api = sys.argv[sys.argv.index("--api") + 1] if "--api" in sys.argv else "chat"
    model = APIS[api](system, tools)
    for _ in range(100):
        text, calls = model.ask()
        if not calls:
            print("final answer:", text)
            return
        results = []
        for call_id, name, arguments in calls:
            result = mcp.request("tools/call", {"name": name, "arguments": arguments})
            text = "".join(part.get("text", "") for part in result["content"])
            print(f"{name} -> {'error' if result.get('isError') else 'ok'}", flush=True)
            results.append((call_id, text, bool(result.get("isError"))))
        model.tell(results)
    sys.exit("gave up after 100 model calls")


if __name__ == "__main__":
    main()
