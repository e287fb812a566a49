"""`kgmem serve`: a read-only server over a workspace's snapshots, as an HTTP JSON API
(`memory.serving.http_app`) and as MCP tools (`memory.serving.mcp_tools`), both answering
through one pool of open snapshots (`memory.serving.pool`)."""
