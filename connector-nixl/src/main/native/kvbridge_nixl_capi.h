/*
 * The part of NIXL's C API (libnixl_capi.so, functions named nixl_capi_*) that kvbridge binds,
 * declared by kvbridge for its JNI glue. Types and signatures follow NIXL 1.5.1's C API as
 * exported by the pinned wheel (see nixl.version in the parent pom); the tests against that
 * library catch any drift.
 *
 * Ownership, as the library implements it:
 *  - every object made by a create function is freed by its destroy function;
 *  - nixl_capi_get_local_md returns a malloc'ed blob and nixl_capi_load_remote_md a strdup'ed
 *    agent name: the caller frees both with free();
 *  - strings from string lists and notification maps are borrowed from the list or map;
 *  - a transfer request is released with nixl_capi_release_xfer_req, then its handle freed with
 *    nixl_capi_destroy_xfer_req;
 *  - nixl_capi_destroy_backend frees only the handle: the backend lives until its agent is
 *    destroyed.
 */
#ifndef KVBRIDGE_NIXL_CAPI_H
#define KVBRIDGE_NIXL_CAPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Results. Positive: in progress; negative: failure. */
typedef enum {
  NIXL_CAPI_SUCCESS = 0,
  NIXL_CAPI_IN_PROG = 1,
  NIXL_CAPI_ERROR_INVALID_PARAM = -1,
  NIXL_CAPI_ERROR_BACKEND = -2,
  NIXL_CAPI_ERROR_INVALID_STATE = -3,
  NIXL_CAPI_ERROR_EXCEPTION = -4,
  NIXL_CAPI_ERROR_NO_TELEMETRY = -5,
  NIXL_CAPI_ERROR_NOT_FOUND = -6
} nixl_capi_status_t;

typedef enum {
  NIXL_CAPI_MEM_DRAM = 0,
  NIXL_CAPI_MEM_VRAM = 1,
  NIXL_CAPI_MEM_BLOCK = 2,
  NIXL_CAPI_MEM_OBJECT = 3,
  NIXL_CAPI_MEM_FILE = 4,
  NIXL_CAPI_MEM_UNKNOWN = 5
} nixl_capi_mem_type_t;

typedef enum {
  NIXL_CAPI_XFER_OP_READ = 0,
  NIXL_CAPI_XFER_OP_WRITE = 1
} nixl_capi_xfer_op_t;

typedef enum {
  NIXL_CAPI_THREAD_SYNC_NONE = 0,
  NIXL_CAPI_THREAD_SYNC_STRICT = 1,
  NIXL_CAPI_THREAD_SYNC_RW = 2
} nixl_capi_thread_sync_t;

/* Opaque handles. */
typedef struct nixl_capi_agent_s *nixl_capi_agent_t;
typedef struct nixl_capi_backend_s *nixl_capi_backend_t;
typedef struct nixl_capi_params_s *nixl_capi_params_t;
typedef struct nixl_capi_param_iter_s *nixl_capi_param_iter_t;
typedef struct nixl_capi_mem_list_s *nixl_capi_mem_list_t;
typedef struct nixl_capi_string_list_s *nixl_capi_string_list_t;
typedef struct nixl_capi_opt_args_s *nixl_capi_opt_args_t;
typedef struct nixl_capi_reg_dlist_s *nixl_capi_reg_dlist_t;
typedef struct nixl_capi_xfer_dlist_s *nixl_capi_xfer_dlist_t;
typedef struct nixl_capi_xfer_dlist_handle_s *nixl_capi_xfer_dlist_handle_t;
typedef struct nixl_capi_xfer_req_s *nixl_capi_xfer_req_t;
typedef struct nixl_capi_notif_map_s *nixl_capi_notif_map_t;

/* Agent settings for nixl_capi_create_configured_agent (num_workers is not used by 1.5.1). */
typedef struct nixl_capi_agent_config_s {
  bool enable_prog_thread;
  bool enable_listen_thread;
  int listen_port;
  nixl_capi_thread_sync_t thread_sync;
  unsigned int num_workers;
  uint64_t pthr_delay_us;
  uint64_t lthr_delay_us;
  bool capture_telemetry;
} nixl_capi_agent_config_t;

/* Filled by nixl_capi_get_xfer_telemetry; start_time_us is on the steady clock. */
struct nixl_capi_xfer_telemetry_s {
  uint64_t start_time_us;
  uint64_t post_duration_us;
  uint64_t xfer_duration_us;
  uint64_t total_bytes;
  uint64_t desc_count;
};
typedef struct nixl_capi_xfer_telemetry_s *nixl_capi_xfer_telemetry_t;

bool nixl_capi_is_stub(void);

/* Agents. */
nixl_capi_status_t nixl_capi_create_configured_agent(const char *name,
                                                     const nixl_capi_agent_config_t *cfg,
                                                     nixl_capi_agent_t *agent);
nixl_capi_status_t nixl_capi_destroy_agent(nixl_capi_agent_t agent);

/* Plugins and backends. */
nixl_capi_status_t nixl_capi_get_available_plugins(nixl_capi_agent_t agent,
                                                   nixl_capi_string_list_t *plugins);
nixl_capi_status_t nixl_capi_get_plugin_params(nixl_capi_agent_t agent, const char *plugin_name,
                                               nixl_capi_mem_list_t *mems,
                                               nixl_capi_params_t *params);
nixl_capi_status_t nixl_capi_create_backend(nixl_capi_agent_t agent, const char *plugin_name,
                                            nixl_capi_params_t params,
                                            nixl_capi_backend_t *backend);
nixl_capi_status_t nixl_capi_destroy_backend(nixl_capi_backend_t backend);

/* String lists. */
nixl_capi_status_t nixl_capi_string_list_size(nixl_capi_string_list_t list, size_t *size);
nixl_capi_status_t nixl_capi_string_list_get(nixl_capi_string_list_t list, size_t index,
                                             const char **str);
nixl_capi_status_t nixl_capi_destroy_string_list(nixl_capi_string_list_t list);

/* Memory type lists. */
nixl_capi_status_t nixl_capi_mem_list_size(nixl_capi_mem_list_t list, size_t *size);
nixl_capi_status_t nixl_capi_mem_list_get(nixl_capi_mem_list_t list, size_t index,
                                          nixl_capi_mem_type_t *mem_type);
nixl_capi_status_t nixl_capi_destroy_mem_list(nixl_capi_mem_list_t list);

/* Backend parameters (string key/value pairs). */
nixl_capi_status_t nixl_capi_create_params(nixl_capi_params_t *params);
nixl_capi_status_t nixl_capi_params_add(nixl_capi_params_t params, const char *key,
                                        const char *value);
nixl_capi_status_t nixl_capi_params_is_empty(nixl_capi_params_t params, bool *is_empty);
nixl_capi_status_t nixl_capi_params_create_iterator(nixl_capi_params_t params,
                                                    nixl_capi_param_iter_t *iter);
nixl_capi_status_t nixl_capi_params_iterator_next(nixl_capi_param_iter_t iter, const char **key,
                                                  const char **value, bool *has_next);
nixl_capi_status_t nixl_capi_params_destroy_iterator(nixl_capi_param_iter_t iter);
nixl_capi_status_t nixl_capi_destroy_params(nixl_capi_params_t params);

/* Optional arguments of registration, transfer and notification calls. */
nixl_capi_status_t nixl_capi_create_opt_args(nixl_capi_opt_args_t *args);
nixl_capi_status_t nixl_capi_opt_args_add_backend(nixl_capi_opt_args_t args,
                                                  nixl_capi_backend_t backend);
nixl_capi_status_t nixl_capi_opt_args_set_notif_msg(nixl_capi_opt_args_t args, const void *data,
                                                    size_t len);
nixl_capi_status_t nixl_capi_opt_args_set_has_notif(nixl_capi_opt_args_t args, bool has_notif);
nixl_capi_status_t nixl_capi_destroy_opt_args(nixl_capi_opt_args_t args);

/* Memory registration. */
nixl_capi_status_t nixl_capi_create_reg_dlist(nixl_capi_mem_type_t mem_type,
                                              nixl_capi_reg_dlist_t *dlist);
nixl_capi_status_t nixl_capi_reg_dlist_add_desc(nixl_capi_reg_dlist_t dlist, uintptr_t addr,
                                                size_t len, uint64_t dev_id,
                                                const void *metadata, size_t metadata_len);
nixl_capi_status_t nixl_capi_destroy_reg_dlist(nixl_capi_reg_dlist_t dlist);
nixl_capi_status_t nixl_capi_register_mem(nixl_capi_agent_t agent, nixl_capi_reg_dlist_t dlist,
                                          nixl_capi_opt_args_t opt_args);
nixl_capi_status_t nixl_capi_deregister_mem(nixl_capi_agent_t agent, nixl_capi_reg_dlist_t dlist,
                                            nixl_capi_opt_args_t opt_args);

/* Metadata exchange. */
nixl_capi_status_t nixl_capi_get_local_md(nixl_capi_agent_t agent, void **data, size_t *len);
nixl_capi_status_t nixl_capi_load_remote_md(nixl_capi_agent_t agent, const void *data, size_t len,
                                            char **agent_name);
nixl_capi_status_t nixl_capi_invalidate_remote_md(nixl_capi_agent_t agent,
                                                  const char *remote_agent);
nixl_capi_status_t nixl_capi_check_remote_md(nixl_capi_agent_t agent, const char *remote_name,
                                             nixl_capi_xfer_dlist_t descs);

/* Transfer descriptor lists. */
nixl_capi_status_t nixl_capi_create_xfer_dlist(nixl_capi_mem_type_t mem_type,
                                               nixl_capi_xfer_dlist_t *dlist);
nixl_capi_status_t nixl_capi_xfer_dlist_add_desc(nixl_capi_xfer_dlist_t dlist, uintptr_t addr,
                                                 size_t len, uint64_t dev_id);
nixl_capi_status_t nixl_capi_destroy_xfer_dlist(nixl_capi_xfer_dlist_t dlist);

/* Prepared transfer descriptor lists: agent_name "" prepares local memory, a loaded peer's name
 * that peer's memory. A prepared list is released with nixl_capi_release_xfer_dlist_handle (which
 * frees the handle); transfer requests made from it copy what they need and outlive it. */
nixl_capi_status_t nixl_capi_prep_xfer_dlist(nixl_capi_agent_t agent, const char *agent_name,
                                             nixl_capi_xfer_dlist_t descs,
                                             nixl_capi_xfer_dlist_handle_t *dlist_hndl,
                                             nixl_capi_opt_args_t opt_args);
nixl_capi_status_t nixl_capi_release_xfer_dlist_handle(nixl_capi_agent_t agent,
                                                       nixl_capi_xfer_dlist_handle_t dlist_hndl);
nixl_capi_status_t nixl_capi_make_xfer_req(nixl_capi_agent_t agent,
                                           nixl_capi_xfer_op_t operation,
                                           nixl_capi_xfer_dlist_handle_t local_descs,
                                           const int *local_indices, size_t local_indices_count,
                                           nixl_capi_xfer_dlist_handle_t remote_descs,
                                           const int *remote_indices, size_t remote_indices_count,
                                           nixl_capi_xfer_req_t *req_hndl,
                                           nixl_capi_opt_args_t opt_args);

/* Transfers. */
nixl_capi_status_t nixl_capi_create_xfer_req(nixl_capi_agent_t agent,
                                             nixl_capi_xfer_op_t operation,
                                             nixl_capi_xfer_dlist_t local_descs,
                                             nixl_capi_xfer_dlist_t remote_descs,
                                             const char *remote_agent,
                                             nixl_capi_xfer_req_t *req_hndl,
                                             nixl_capi_opt_args_t opt_args);
nixl_capi_status_t nixl_capi_post_xfer_req(nixl_capi_agent_t agent, nixl_capi_xfer_req_t req_hndl,
                                           nixl_capi_opt_args_t opt_args);
nixl_capi_status_t nixl_capi_get_xfer_status(nixl_capi_agent_t agent,
                                             nixl_capi_xfer_req_t req_hndl);
nixl_capi_status_t nixl_capi_get_xfer_telemetry(nixl_capi_agent_t agent,
                                                nixl_capi_xfer_req_t req_hndl,
                                                nixl_capi_xfer_telemetry_t telemetry);
nixl_capi_status_t nixl_capi_release_xfer_req(nixl_capi_agent_t agent, nixl_capi_xfer_req_t req);
nixl_capi_status_t nixl_capi_destroy_xfer_req(nixl_capi_xfer_req_t req);

/* Notifications. */
nixl_capi_status_t nixl_capi_gen_notif(nixl_capi_agent_t agent, const char *remote_agent,
                                       const void *data, size_t len,
                                       nixl_capi_opt_args_t opt_args);
nixl_capi_status_t nixl_capi_create_notif_map(nixl_capi_notif_map_t *notif_map);
nixl_capi_status_t nixl_capi_get_notifs(nixl_capi_agent_t agent, nixl_capi_notif_map_t notif_map,
                                        nixl_capi_opt_args_t opt_args);
nixl_capi_status_t nixl_capi_notif_map_size(nixl_capi_notif_map_t map, size_t *size);
nixl_capi_status_t nixl_capi_notif_map_get_agent_at(nixl_capi_notif_map_t map, size_t index,
                                                    const char **agent_name);
nixl_capi_status_t nixl_capi_notif_map_get_notifs_size(nixl_capi_notif_map_t map,
                                                       const char *agent_name, size_t *size);
nixl_capi_status_t nixl_capi_notif_map_get_notif(nixl_capi_notif_map_t map,
                                                 const char *agent_name, size_t index,
                                                 const void **data, size_t *len);
nixl_capi_status_t nixl_capi_notif_map_clear(nixl_capi_notif_map_t map);
nixl_capi_status_t nixl_capi_destroy_notif_map(nixl_capi_notif_map_t notif_map);

#ifdef __cplusplus
}
#endif

#endif /* KVBRIDGE_NIXL_CAPI_H */
