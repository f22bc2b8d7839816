// image::RegistrySession and the TransportOptions that carry it: one client per host per operation.
// No network: a Registry opens its connection on first use. The probe count against a real
// docker-registry is verify/static_integration_test.cc's.
#include "image/registry_session.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "image/transport.h"

using namespace imgtool;
using namespace imgtool::image;

TEST_CASE("registry session: one client per host, shared by every copy of the transport options") {
  TransportOptions o;
  auto a = registry_for("registry.example.com", o);
  CHECK(a == registry_for("registry.example.com", o));
  TransportOptions copy = o;  // a step handed the options: the same session
  CHECK(a == registry_for("registry.example.com", copy));
  CHECK(a != registry_for("other.example.com:5000", o));
  CHECK(o.session->size() == 2);
  auto repo = open_repository(parse_reference("docker://registry.example.com/ai/paddle:3.3.1"), copy);
  CHECK(&repo->registry() == a.get());
  CHECK(repo->path() == "ai/paddle");
  CHECK(o.session->size() == 2);
}

TEST_CASE("registry session: separate operations do not share; without one, each call is its own client") {
  TransportOptions one, two;
  CHECK(registry_for("registry.example.com", one) != registry_for("registry.example.com", two));
  TransportOptions none;
  none.session = nullptr;
  CHECK(registry_for("registry.example.com", none) != registry_for("registry.example.com", none));
}

TEST_CASE("open_repository: a registry reference only") {
  TransportOptions o;
  CHECK_THROWS_AS(open_repository(parse_reference("oci:/tmp/layout:tag"), o), InputError);
  CHECK_THROWS_AS(open_repository(parse_reference("docker-daemon:paddle:3.3.1"), o), InputError);
}
