#!/usr/bin/env python3
"""Speaks to `heaptui mcp` with an independent client, the official MCP
Python SDK, and checks its answers against `heaptui report --json` of the
same dumps.

    python3 -m venv /tmp/mcp-venv && /tmp/mcp-venv/bin/pip install mcp
    /tmp/mcp-venv/bin/python scripts/check_mcp.py target/release/heaptui fixtures/leaky.hprof.gz
    /tmp/mcp-venv/bin/python scripts/check_mcp.py target/release/heaptui OLD.heapsnapshot NEW.heapsnapshot

It lists the tools, calls every one of them (the comparison only with
several dumps, oldest first), prints each call with its time and size, and
fails when an answer is an error, is longer than 32 KB, or disagrees with
the report on the totals, the largest dominator or the suspects.
"""
import asyncio
import json
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def report(binary, dumps):
    args = [binary, "report", "--no-cache", "--json", "--top", "0", dumps[-1]]
    for old in dumps[:-1]:
        args += ["--baseline", old]
    return json.loads(subprocess.run(args, check=True, capture_output=True).stdout)


async def session(binary, dumps, expected):
    params = StdioServerParameters(command=binary, args=["mcp", "--no-cache"] + dumps)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            tools = sorted(t.name for t in (await s.list_tools()).tools)
            print("tools:", ", ".join(tools))

            async def call(name, args):
                async def progress(_p, _total, _message):
                    pass

                start = time.perf_counter()
                res = await s.call_tool(name, args, progress_callback=progress)
                ms = (time.perf_counter() - start) * 1000
                text = res.content[0].text
                print(f"{name:16} {json.dumps(args)[:60]:60} {ms:7.1f} ms {len(text):6} bytes")
                assert not res.is_error, f"{name}: {text}"
                assert len(text) <= 32 * 1024, f"{name}: {len(text)} bytes"
                return json.loads(text)

            summary = await call("summary", {})
            assert summary["totals"]["objects"] == expected["summary"]["objects"]
            assert summary["totals"]["total_bytes"] == expected["summary"]["total_bytes"]
            top = await call("dominators", {"limit": 200})
            largest = expected["dominators"][0]["id"]
            assert any(g["largest"][0]["id"] == largest for g in top["groups"])
            group = top["groups"][0]
            await call("dominator_group", {"type": group["type"]})
            await call("dominators", {"parent": largest})
            name = (await call("types", {"limit": 1}))["types"][0]["name"]
            assert name == expected["types"][0]["name"]
            await call("instances", {"type": name})
            obj = await call("object", {"id": largest})
            assert obj["object"]["retained_bytes"] == expected["dominators"][0]["retained_bytes"]
            for which in ["references", "retainers", "domination_path", "retention_path"]:
                await call("object_list", {"id": largest, "list": which})
            dups = await call("duplicates", {})
            assert dups["total"] == len(expected["duplicates"])
            if dups["total"]:
                await call("duplicate_set", {"set": 0})
            suspects = await call("suspects", {"limit": 200})
            assert suspects["suspects"] == expected["suspects"][:200]
            if len(dumps) > 1:
                paths = await call("comparison", {})
                assert paths["total"] == len(expected["comparison"]["paths"])
            print("ok")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, dumps = sys.argv[1], sys.argv[2:]
    asyncio.run(session(binary, dumps, report(binary, dumps)))


if __name__ == "__main__":
    main()
