# tests/unit/test_session.c counts every JSON parse and every decode of a
# command: jansson's loaders and ptflow_decode() pass through its wrappers.
TEST_LDFLAGS_test_session := -Wl,--wrap=json_loadfd -Wl,--wrap=json_load_file \
	-Wl,--wrap=json_loadb -Wl,--wrap=ptflow_decode
