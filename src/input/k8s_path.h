// The pod a container's log belongs to, read from the path the kubelet
// gives it (DESIGN.md §1 `format = "cri"`: {.k8s.namespace}, {.k8s.pod},
// {.k8s.container}):
//
//   /var/log/pods/NAMESPACE_POD_UID/CONTAINER/RESTARTS.log
//   /var/log/containers/POD_NAMESPACE_CONTAINER-ID.log   (a symlink to the first)
//
// Namespaces and pod names cannot hold '_' (DNS labels and subdomains), a
// container name neither, and ID is the container's 64 hex digits, so both
// split without doubt. Only the path's last components are read: a copy
// under another root (a test, a backup) reads the same. Any other path has
// no pod (every field "").
#pragma once

#include <string_view>

#include "match/envelope_fields.h"

namespace swthrottle::input {

match::PodOrigin pod_of_path(std::string_view path);

}  // namespace swthrottle::input
