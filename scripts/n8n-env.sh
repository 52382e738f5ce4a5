# Sourced by every script (and the end-to-end harness) that runs an n8n command: one place for the
# environment of a local, offline n8n bound to 127.0.0.1.

# A fixed key so that credentials imported by one n8n command can be read by the next one, across
# runs of the demo or a test. It protects nothing: it is published here, for local use only.
LOCAL_ONLY_PUBLISHED_ENCRYPTION_KEY='n8n-nodes-product-data-integration-local-demo-only'

# n8n_env <userFolder> <port> <brokerPort>
# Exports the environment for n8n with its data in <userFolder>/.n8n, its editor and REST API on
# 127.0.0.1:<port> and its task-runner broker on <brokerPort> (two n8n processes at once, even a
# `n8n execute`, each need their own broker port).
n8n_env() {
	if [ "$#" -ne 3 ]; then
		echo "usage: n8n_env <userFolder> <port> <brokerPort>" >&2
		return 2
	fi
	export N8N_USER_FOLDER="$1"
	export N8N_PORT="$2"
	export N8N_RUNNERS_BROKER_PORT="$3"
	export N8N_ENCRYPTION_KEY="$LOCAL_ONLY_PUBLISHED_ENCRYPTION_KEY"
	# n8n refuses to load nodes under NODE_ENV=test, which test runners set; production is what
	# n8n's own container image runs with.
	export NODE_ENV=production
	export N8N_HOST=127.0.0.1
	export N8N_LISTEN_ADDRESS=127.0.0.1
	export N8N_DIAGNOSTICS_ENABLED=false
	export N8N_VERSION_NOTIFICATIONS_ENABLED=false
	export N8N_TEMPLATES_ENABLED=false
	export N8N_PERSONALIZATION_ENABLED=false
	# Plain http on loopback: a secure cookie would never be sent back.
	export N8N_SECURE_COOKIE=false
	export N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS=false
	export DB_SQLITE_POOL_SIZE=1
	# Its start-up job fetches a registry from the internet and logs a stack trace when it cannot.
	export N8N_DISABLED_MODULES=mcp-registry
}

# free_port: prints a TCP port on 127.0.0.1 that is free right now (the system picks it).
free_port() {
	node -e "const s = require('node:net').createServer();
s.listen(0, '127.0.0.1', () => { process.stdout.write(String(s.address().port)); s.close(); });"
}
