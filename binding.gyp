{
  "variables": {
    "flexpipe_uring%": "<!(node scripts/has-liburing.mjs <(target_arch))"
  },
  "target_defaults": {
    "cflags_cc": ["-std=c++17", "-O3", "-fPIC", "-fopenmp", "-Wall", "-Wextra", "-Wno-unused-parameter"],
    "cflags_cc!": ["-fno-exceptions", "-O2", "-O0"],
    "include_dirs": ["native"],
    "defines": ["NDEBUG"],
    "conditions": [
      ["flexpipe_uring==1", { "defines": ["FLEXPIPE_HAVE_LIBURING=1"] }]
    ]
  },
  "targets": [
    {
      "target_name": "flexpipe_engine",
      "type": "static_library",
      "cflags_cc": ["-fno-exceptions"],
      "sources": ["<!@(node scripts/gyp-sources.mjs engine)"],
      "conditions": [
        ["flexpipe_uring==1", { "sources": ["<!@(node scripts/gyp-sources.mjs uring)"] }],
        ["target_arch=='arm64'", { "sources": ["<!@(node scripts/gyp-sources.mjs neon)"] }]
      ]
    },
    {
      "target_name": "flexpipe_avx2",
      "type": "static_library",
      "cflags_cc": ["-fno-exceptions", "-mavx2", "-mfma", "-mf16c"],
      "conditions": [
        ["target_arch=='x64'", { "sources": ["<!@(node scripts/gyp-sources.mjs avx2)"] }]
      ]
    },
    {
      "target_name": "flexpipe_avx512",
      "type": "static_library",
      "cflags_cc": ["-fno-exceptions", "-mavx512f", "-mavx2", "-mfma", "-mf16c"],
      "conditions": [
        ["target_arch=='x64'", { "sources": ["<!@(node scripts/gyp-sources.mjs avx512)"] }]
      ]
    },
    {
      "target_name": "flexpipe",
      "dependencies": ["flexpipe_engine", "flexpipe_avx2", "flexpipe_avx512"],
      "sources": ["<!@(node scripts/gyp-sources.mjs addon)"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": [
        "NAPI_VERSION=9",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
        "NAPI_CPP_EXCEPTIONS"
      ],
      "cflags_cc": ["-fexceptions"],
      "ldflags": ["-fopenmp", "-Wl,-rpath,'$$ORIGIN'"],
      "libraries": ["-fopenmp"],
      "conditions": [
        ["flexpipe_uring==1", { "libraries": ["-Wl,-Bstatic", "-luring", "-Wl,-Bdynamic"] }]
      ]
    }
  ]
}
