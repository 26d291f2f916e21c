// The gloo::rendezvous::Store adapter: gloo's own full-mesh connect runs through the job's
// authenticated store, and an allreduce over that mesh is exact.
#include <gloo/allreduce_ring.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "common/errors.h"
#include "ops/gloo/gloo_mesh.h"
#include "ops/gloo/rendezvous_store.h"
#include "rendezvous_fixture.h"

using namespace std::chrono_literals;
using runrun::ops::RendezvousStore;
using runrun::rendezvous::test::TestServer;

TEST_CASE("gloo connects a full mesh through the rendezvous store", "[rendezvous][gloo]") {
  TestServer server;
  constexpr int kRanks = 3;
  std::vector<std::string> failures(kRanks);
  std::vector<std::vector<float>> data(kRanks);
  std::vector<uint64_t> traffic(kRanks);
  std::atomic<int> done{0}, failed{0};
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        RendezvousStore store(std::shared_ptr(server.client()), /*generation=*/7, 20s);
        gloo::transport::tcp::attr attr("127.0.0.1");
        auto device = gloo::transport::tcp::CreateDevice(attr);
        auto context = std::make_shared<gloo::rendezvous::Context>(rank, kRanks);
        context->setTimeout(20s);
        context->connectFullMesh(store, device);
        // gloo's full mesh, as docs/scaling.md models it: rank r sets its host name, gets the
        // r names below it, sets its N-1 pair addresses as one value, and waits for and gets
        // each other rank's value (a get is a wait and a get on the wire).
        traffic[rank] = store.traffic().requests;
        data[rank] = {1.0f * (rank + 1), 10.0f};
        gloo::AllreduceRing<float> allreduce(context, {data[rank].data()}, 2);
        allreduce.run();
        // A rank whose ring is done may still have its last bytes on the way to a peer:
        // closing its connections now can make that peer read "connection closed by peer"
        // (gloo tears pairs down without a goodbye). Every rank waits until all are done.
        ++done;
        while (done.load() < kRanks && failed.load() == 0) std::this_thread::sleep_for(1ms);
      } catch (const std::exception& error) {
        failures[rank] = error.what();
        ++failed;
      }
    });
  }
  for (auto& thread : ranks) thread.join();
  for (int rank = 0; rank < kRanks; ++rank) {
    INFO("rank " << rank << ": " << failures[rank]);
    CHECK(failures[rank].empty());
    CHECK(data[rank] == std::vector<float>{6.0f, 30.0f});
    CHECK(traffic[rank] == static_cast<uint64_t>(2 + 2 * rank + 3 * (kRanks - 1)));
  }
}

TEST_CASE("the gloo store's get waits for a late key and its wait is bounded",
          "[rendezvous][gloo]") {
  TestServer server;
  RendezvousStore store(std::shared_ptr(server.client()), 0, 20s);
  std::thread late([&] {
    std::this_thread::sleep_for(100ms);
    RendezvousStore(std::shared_ptr(server.client()), 0).set("late", {'o', 'k'});
  });
  CHECK(store.get("late") == std::vector<char>{'o', 'k'});
  late.join();
  CHECK_THROWS_AS(store.wait({"never"}, 100ms), runrun::TimeoutError);
  // Another generation does not see the key.
  RendezvousStore other(std::shared_ptr(server.client()), 1, 100ms);
  CHECK_THROWS_AS(other.get("late"), runrun::TimeoutError);
}

TEST_CASE("the gloo store counts its requests and the bytes it read", "[rendezvous][gloo]") {
  TestServer server;
  RendezvousStore store(std::shared_ptr(server.client()), 0, 20s);
  CHECK(store.traffic().requests == 0);
  store.set("a", {'x', 'y', 'z'});
  CHECK(store.traffic().requests == 1);
  store.wait({"a"});
  CHECK(store.traffic().requests == 2);
  CHECK(store.get("a") == std::vector<char>{'x', 'y', 'z'});
  CHECK(store.traffic().requests == 4);  // a wait and a get
  CHECK(store.traffic().bytes_read == 3);
  CHECK(runrun::ops::traffic_summary(store) == "4 store requests, 3 bytes read");
}

TEST_CASE("runrun's mesh reads one address per peer from the store and connects every pair",
          "[rendezvous][gloo]") {
  TestServer server;
  constexpr int kRanks = 3;
  std::vector<std::string> failures(kRanks);
  std::vector<RendezvousStore::Traffic> traffic(kRanks);
  std::vector<int> received(kRanks, -1);
  std::atomic<int> done{0}, failed{0};
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        RendezvousStore store(std::shared_ptr(server.client()), /*generation=*/3, 20s);
        auto device = runrun::gloo_backend::make_tcp_device("127.0.0.1", "");
        runrun::gloo_backend::Mesh mesh(store, "test/mesh", rank, kRanks, device, 20s);
        traffic[rank] = store.traffic();
        // Every pair carries bytes: each rank sends its rank to the next one.
        int mine = rank;
        const uint64_t slot = mesh.next_slot();
        auto send = mesh.context()->createUnboundBuffer(&mine, sizeof(mine));
        auto recv = mesh.context()->createUnboundBuffer(&received[rank], sizeof(int));
        send->send((rank + 1) % kRanks, slot);
        recv->recv((rank + kRanks - 1) % kRanks, slot);
        send->waitSend(20s);
        recv->waitRecv(20s);
        ++done;
        while (done.load() < kRanks && failed.load() == 0) std::this_thread::sleep_for(1ms);
      } catch (const std::exception& error) {
        failures[rank] = error.what();
        ++failed;
      }
    });
  }
  for (auto& thread : ranks) thread.join();
  for (int rank = 0; rank < kRanks; ++rank) {
    INFO("rank " << rank << ": " << failures[rank]);
    CHECK(failures[rank].empty());
    CHECK(received[rank] == (rank + kRanks - 1) % kRanks);
    // A set per peer, one wait for every key meant for this rank, a get (wait + get) per peer;
    // one 136-byte address per peer (docs/scaling.md, "Connections and start-up").
    CHECK(traffic[rank].requests == 3 * (kRanks - 1) + 1);
    CHECK(traffic[rank].bytes_read == 136 * (kRanks - 1));
  }
}
