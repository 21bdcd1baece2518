#!/usr/bin/env bash
# The sample console's users on WildFly, in the ApplicationRealm files (application-users.properties and
# application-roles.properties), which WildFly's default "other" security domain reads; their groups are their roles.
# A user already there is left as it is. Usage:
#   JBOSS_HOME=/path/to/wildfly console-users.sh [operator password] [viewer password]
set -euo pipefail
: "${JBOSS_HOME:?set JBOSS_HOME to the WildFly installation}"
config="${JBOSS_HOME}/standalone/configuration"

add() {
  if grep -q "^$1=" "${config}/application-users.properties"; then
    echo "console-users: $1 is already an application user"
  else
    "${JBOSS_HOME}/bin/add-user.sh" -s -a -sc "${config}" -u "$1" -p "$2" -g "$3"
  fi
}
add operator "${1:-Operator-Pass-1}" ferret-operator
add viewer "${2:-Viewer-Pass-1}" ferret-viewer
