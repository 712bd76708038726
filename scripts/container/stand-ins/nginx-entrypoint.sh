#!/bin/sh
# As the official nginx image's entrypoint (20-envsubst-on-templates.sh): each
# /etc/nginx/templates/NAME.template becomes /etc/nginx/conf.d/NAME, with only the
# variables the environment defines substituted, so nginx's own $variables stay.
set -eu
if [ "${1:-}" = nginx ] && [ -d /etc/nginx/templates ]; then
    defined=$(awk 'END { for (name in ENVIRON) if (name ~ /^[A-Za-z_][A-Za-z0-9_]*$/) printf "${%s} ", name }' </dev/null)
    for template in /etc/nginx/templates/*.template; do
        [ -f "$template" ] || continue
        output=/etc/nginx/conf.d/$(basename "$template" .template)
        envsubst "$defined" <"$template" >"$output"
        echo "$0: rendered $template to $output"
    done
fi
exec "$@"
