#!/usr/bin/env python3
"""An agent whose tools are its own Python functions (subprocess, file writes), the
kind stepbox runs INSIDE the sandbox: it executes what its model asks for itself, and
stepbox records each step, its tool outputs (read from the next request) and the
workspace after it, so it can be paused, edited, rolled back and forked.

Run it under stepbox (see ../README.md, "Agents inside the sandbox"):
  npx stepbox run resources/agents/python-inside --agent 'sandbox:python3 /opt/agent/agent.py' \\
      --agent-dir resources/agents/python-inside \\
      --model scripted:resources/agents/python-inside/model.jsonl

Only the standard library: the model is OpenAI Chat Completions at $OPENAI_BASE_URL
(inside the sandbox, 127.0.0.1; stepbox carries it to the episode's endpoint).
"""
import json
import os
import subprocess
import sys
import urllib.request

# `--lossy` sends no tool outputs back: a request a recording cannot answer (a fork or
# replay of an episode run without it stops as diverged).
LOSSY = "--lossy" in sys.argv[1:]

BASE_URL = os.environ["OPENAI_BASE_URL"]
API_KEY = os.environ["OPENAI_API_KEY"]
MODEL = os.environ["STEPBOX_MODEL"]
GOAL = os.environ["STEPBOX_GOAL"]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "shell",
            "description": "Run a shell command in the current directory; returns its exit code and output.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Write a text file (parent folders are created).",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
                "additionalProperties": False,
            },
        },
    },
]


def shell(command):
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=120)
    return "exit code %d\n%s%s" % (done.returncode, done.stdout, done.stderr)


def write_file(path, content):
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "w") as f:
        f.write(content)
    return "wrote %d bytes to %s" % (len(content.encode()), path)


FUNCTIONS = {"shell": shell, "write_file": write_file}


def chat(messages):
    request = urllib.request.Request(
        BASE_URL + "/chat/completions",
        data=json.dumps({"model": MODEL, "messages": messages, "tools": TOOLS}).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer " + API_KEY},
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.load(response)["choices"][0]["message"]


def main():
    messages = [
        {"role": "system", "content": "You are a careful agent. Use the tools to do the task."},
        {"role": "user", "content": GOAL},
    ]
    for _ in range(50):
        message = chat(messages)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            print(message.get("content") or "")
            return 0
        for call in calls:
            fn = call["function"]
            try:
                output = FUNCTIONS[fn["name"]](**json.loads(fn["arguments"]))
            except Exception as e:  # the model hears about its own mistakes
                output = "error: %s" % e
            if not LOSSY:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    print("too many steps", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
