#include "input/k8s_path.h"

#include <doctest/doctest.h>

#include <string>

namespace {

TEST_CASE("k8s path: the pod of a container log, in both namings") {
  const std::string id(64, 'a');
  struct Row {
    std::string path, ns, pod, container;
  };
  const Row rows[] = {
      {"/var/log/pods/shop_web-7d4b9c8f6-x2x9p_0b5e1c2a-1111-2222-3333-444455556666/nginx/0.log", "shop",
       "web-7d4b9c8f6-x2x9p", "nginx"},
      {"/var/log/pods/kube-system_coredns-5d78c9869d-abcde_9f0e/coredns/12.log", "kube-system",
       "coredns-5d78c9869d-abcde", "coredns"},
      {"/var/log/containers/web-7d4b9c8f6-x2x9p_shop_nginx-" + id + ".log", "shop", "web-7d4b9c8f6-x2x9p", "nginx"},
      {"/tmp/copy/pods/ns_pod_uid/c/0.log", "ns", "pod", "c"},   // another root reads the same
      {"/var/log/containers/web_shop_nginx-x.log", "", "", ""},  // no container ID
      {"/var/log/pods/shop_web/nginx/0.log", "", "", ""},        // no UID
      {"/var/log/pods/a_b_c_d/nginx/0.log", "", "", ""},
      {"/var/log/pods/shop_web_uid/nginx/current.log", "", "", ""},
      {"/var/log/syslog", "", "", ""},
      {"-", "", "", ""},
  };
  for (const Row& r : rows) {
    CAPTURE(r.path);
    const auto o = swthrottle::input::pod_of_path(r.path);
    CHECK(o.namespace_name == r.ns);
    CHECK(o.pod == r.pod);
    CHECK(o.container == r.container);
  }
}

}  // namespace
