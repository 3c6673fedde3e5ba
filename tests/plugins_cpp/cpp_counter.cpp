/* SPDX-License-Identifier: MIT */
// cpp_counter.cpp: test plugin written in C++17: a class (Counter) behind the C entry
// point, as docs/abi.md describes. It counts the frames its manager is updated in and
// publishes the API "test.cpp_counter" v1 to read that count and how many times this
// copy of the library has been loaded.
//
// The load count lives in a class with default visibility, the way a header-only
// library marks its API: g++ makes such a static member an STB_GNU_UNIQUE symbol, and the
// dynamic linker never unloads a library that defines one. Built with -fno-gnu-unique
// (meson.build: cpp_counter.so) it is an ordinary symbol and dlclose() unmaps the
// library; without (cpp_counter_pinned.so) the library stays, and the test shows both.
//
// No static object has a destructor; nothing throws across the C boundary (the callbacks
// are noexcept); the state lives in host memory (placement new, explicit destructor).
#include <new>

#include "ecs_plugin.h"

#ifndef CPP_PLUGIN_NAME
#define CPP_PLUGIN_NAME "cpp_counter"
#endif

namespace cpp_counter
{

// What a header-only library that marks its API for export looks like.
struct __attribute__((visibility("default"))) LoadCount {
    static inline unsigned value = 0;  // C++17 inline variable: vague linkage, one per process
};

struct Api {  // "test.cpp_counter" v1; test_cpp_plugin.c declares the same layout
    uint32_t struct_size;
    const void *ctx;
    uint64_t (*frames)(const void *ctx);
    unsigned (*loads)(const void *ctx);
};

class Counter
{
  public:
    explicit Counter(const ecs_host *h) noexcept : host_(h) {}
    ~Counter() { host_->log(host_, ECS_LOG_INFO, "%llu frames", (unsigned long long)frames_); }
    Counter(const Counter &) = delete;
    Counter &operator=(const Counter &) = delete;

    ecs_status registerAll() noexcept
    {
        ecs_manager_desc m{};  // by field: a desc that grows a field stays source-compatible
        m.struct_size = sizeof m;
        m.name = CPP_PLUGIN_NAME;
        m.state = this;
        m.update = &Counter::onUpdate;
        m.count = &Counter::onCount;
        Api api = {sizeof api, this, &Counter::onFrames, &Counter::onLoads};
        ecs_status s = host_->register_manager(host_, &m);
        if (s == ECS_OK) s = host_->api_publish(host_, "test.cpp_counter", 1, &api, sizeof api);
        return s;
    }
    const ecs_host *host() const noexcept { return host_; }

  private:
    static void onUpdate(void *self, const ecs_frame_info *) noexcept
    {
        static_cast<Counter *>(self)->frames_++;
    }
    static uint32_t onCount(void *self) noexcept
    {
        return static_cast<uint32_t>(static_cast<Counter *>(self)->frames_);
    }
    static uint64_t onFrames(const void *self) noexcept
    {
        return static_cast<const Counter *>(self)->frames_;
    }
    static unsigned onLoads(const void *) noexcept { return LoadCount::value; }

    const ecs_host *host_;
    uint64_t frames_ = 0;
};

// Construct the Counter in host memory; on failure nothing is left.
ecs_status load(const ecs_host *h, const ecs_load_args *, void **state) noexcept
{
    void *mem = h->alloc(h, sizeof(Counter));
    if (!mem) return ECS_ERR_NO_MEMORY;
    Counter *c = new (mem) Counter(h);
    ecs_status s = c->registerAll();
    if (s != ECS_OK) {
        c->~Counter();
        h->free(h, mem);
        return s;
    }
    LoadCount::value++;
    *state = c;
    return ECS_OK;
}

void unload(const ecs_host *h, void *state, ecs_unload_reason) noexcept
{
    static_cast<Counter *>(state)->~Counter();
    h->free(h, state);
}

// Constant-initialized (no constructor runs at dlopen, no destructor at dlclose).
constexpr ecs_plugin_desc desc = {
    ECS_PLUGIN_DESC_HEADER, CPP_PLUGIN_NAME, "1.0.0", 1, nullptr, load, unload, ECS_STATE_NONE};

}  // namespace cpp_counter

ECS_PLUGIN_EXPORT(cpp_counter::desc)
